// Starting what the tests run against: the service's binary (built by run.sh), Prism's validating
// proxy in front of it, and json-server. Each listens on a free loopback port and is stopped by the
// test.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';

export function requireEnv(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests with ./run.sh`);
  return value;
}

export const WRITE_TOKEN = requireEnv('WRITE_TOKEN');
export const READ_TOKEN = requireEnv('READ_TOKEN');

// start runs a command and waits for a line of its output that names the address it listens
// on; listening(line) returns that URL, or nothing for other lines.
async function start(name, command, args, { env = process.env, stream = 'stdout', listening }) {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = [];
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start in 30 s:\n${output.join('\n')}`)), 30_000);
    for (const source of ['stdout', 'stderr']) {
      createInterface({ input: child[source] }).on('line', (line) => {
        output.push(line);
        const found = source === stream && listening(line);
        if (found) {
          clearTimeout(timer);
          resolve(found);
        }
      });
    }
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} stopped (exit status ${code}) before it listened:\n${output.join('\n')}`));
    });
  });
  return {
    url,
    output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    },
  };
}

// startService starts the binary on a free port of 127.0.0.1, with the sample users and the two
// test tokens, plus any flags. Its url is the one the start-up log names: https:// with -tls-cert.
export function startService(flags = []) {
  return start('the service', requireEnv('USERS_BIN'), ['-addr', '127.0.0.1:0', '-sample-data', ...flags], {
    env: { ...process.env, USERS_TOKENS: `${WRITE_TOKEN}:write,${READ_TOKEN}:read` },
    stream: 'stderr',
    listening: (line) => {
      const match = /msg=listening addr=\S+ url=(\S+)/.exec(line);
      return match && match[1];
    },
  });
}

async function freePort() {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

// startPrism starts Prism's proxy in front of upstream. It forwards every request as it is
// (--validate-request=false: the tests send bad requests on purpose, and --cors=false: preflights
// must reach the service), checks each answer against the document, and names every mismatch in
// an sl-violations header of the answer.
export async function startPrism(document, upstream) {
  const port = await freePort();
  return start('Prism', new URL('./node_modules/.bin/prism', import.meta.url).pathname,
    ['proxy', document, upstream, '--port', String(port), '--host', '127.0.0.1', '--cors=false',
      '--validate-request=false', '--errors=false'],
    { listening: (line) => line.includes('Prism is listening') && `http://127.0.0.1:${port}` });
}

// startJSONServer starts json-server (0.17.4, as package-lock.json pins it) as its README runs it,
// on a free port of 127.0.0.1, serving the data file db, which it rewrites as clients write.
export async function startJSONServer(db) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  return start('json-server', new URL('./node_modules/.bin/json-server', import.meta.url).pathname,
    [db, '--port', String(port), '--host', '127.0.0.1'],
    { listening: (line) => line.trim() === url && url }); // its "Home" line, printed once it listens
}
