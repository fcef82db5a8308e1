// End-to-end files each start their own system (database + bus prefix); run them one at a time so
// the 2-core CI machine is not oversubscribed by several gateways and services at once.
module.exports = { ...require('../jest.preset.js'), maxWorkers: 1, testTimeout: 60000 };
