import { startServer } from './start.js';

startServer();
