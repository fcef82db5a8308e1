export { startCallbackService, type RunningCallbackService } from './service';
export { loadCallbackConfig, type CallbackConfig } from './config';
