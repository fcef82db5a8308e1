export { startBookletService, type RunningBookletService } from './service';
export { loadBookletConfig, type BookletConfig } from './config';
