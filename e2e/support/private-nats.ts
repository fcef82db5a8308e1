// The private nats-server of a test lives in libs/test-support, shared with the apps' own tests.
export {
  loginCheckingNats,
  PrivateNats,
  type LoginCheckingNats,
  type PrivateNatsOptions,
} from '@payments/test-support/private-nats';
