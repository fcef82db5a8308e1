module.exports = { ...require('../../jest.preset.js'), testMatch: ['**/?(*.)test.ts?(x)'] };
