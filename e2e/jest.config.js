// End-to-end files each start their own system (database + bus prefix). Within one jest process
// they run one at a time; the test target (project.json) runs two processes, each one shard of the
// files (support/shard-sequencer.js), so at most two systems share the 2-core CI machine.
module.exports = {
  ...require('../jest.preset.js'),
  maxWorkers: 1,
  testTimeout: 60000,
  testSequencer: '<rootDir>/support/shard-sequencer.js',
};
