/** Process entry: `node dist/src/main.js [command]` (npm start runs `serve`). */
import { main } from './cli/main.js';

await main(process.argv);
