// A tiny static file server for the browser example (no dependencies). Serves build/examples/browser, which
// `npm run build:examples` writes, on 127.0.0.1 only.
//   node scripts/serve.mjs [--port 8080] [--root build/examples/browser] [--isolated]
// Port 0 picks a free port; the URL is printed on stdout. Also importable: `startServer({ root, port })`.
// --isolated (`isolated: true`) sends the headers that make the page cross-origin isolated (COOP and COEP), where
// browsers let it share memory with its workers: FingerprintIndex.queryManyAsync then hands its workers one
// SharedArrayBuffer instead of a copy each.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const DEFAULT_ROOT = path.resolve(here, '../build/examples/browser');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/**
 * Starts the server; resolves to `{ url, close() }` once it listens.
 * @param {{ root?: string, port?: number, host?: string, isolated?: boolean }} [options]
 */
export function startServer({ root = DEFAULT_ROOT, port = 8080, host = '127.0.0.1', isolated = false } = {}) {
  const base = path.resolve(root);
  if (!fs.existsSync(path.join(base, 'index.html'))) {
    throw new Error(`${base}/index.html not found: run "npm run build" and "npm run build:examples" first`);
  }
  const server = http.createServer((req, res) => {
    const send = (status, body, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed\n');
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
    } catch {
      return send(400, 'bad request\n');
    }
    if (pathname.endsWith('/')) pathname += 'index.html';
    const file = path.resolve(base, '.' + pathname);
    // Never serve anything outside the root (../ or encoded variants).
    if (file !== base && !file.startsWith(base + path.sep)) return send(403, 'forbidden\n');
    fs.stat(file, (error, stat) => {
      if (error || !stat.isFile()) return send(404, `not found: ${pathname}\n`);
      res.writeHead(200, {
        'content-type': TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
        'content-length': stat.size,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        ...(isolated
          ? {
              'cross-origin-opener-policy': 'same-origin',
              'cross-origin-embedder-policy': 'require-corp',
              'cross-origin-resource-policy': 'same-origin',
            }
          : {}),
      });
      if (req.method === 'HEAD') return res.end();
      fs.createReadStream(file).pipe(res);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      const actualPort = typeof address === 'object' && address ? address.port : port;
      resolve({
        url: `http://${host}:${actualPort}/`,
        close: () => new Promise((done) => server.close(() => done(undefined))),
      });
    });
  });
}

function argument(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && at + 1 < process.argv.length ? process.argv[at + 1] : fallback;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const port = Number(argument('port', process.env.PORT ?? '8080'));
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`serve: --port must be an integer from 0 to 65535, got ${argument('port', process.env.PORT)}`);
    process.exit(2);
  }
  try {
    const isolated = process.argv.includes('--isolated');
    const { url } = await startServer({ root: argument('root', DEFAULT_ROOT), port, isolated });
    console.log(`serving the simhash-wasm example at ${url} (Ctrl+C to stop)`);
  } catch (error) {
    console.error(`serve: ${error instanceof Error ? error.message : error}`);
    process.exit(1);
  }
}
