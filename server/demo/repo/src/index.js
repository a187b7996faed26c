import { createServer } from 'node:http';
import { route } from './api/routes.js';

const port = Number(process.env.PORT ?? 8080);
createServer(route).listen(port, () => console.log(`lamplighter listening on :${port}`));
