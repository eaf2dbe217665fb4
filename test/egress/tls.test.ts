// https through the egress against a real TLS server with a certificate from a throwaway CA (openssl): the
// connection is pinned to the vetted address, yet SNI and the certificate check stay on the host name.
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { access, get, localEgress, lookupOf, never, rejection } from './servers.ts';

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const OPENSSL = hasOpenssl();
if (!OPENSSL) console.log('test/egress/tls.test.ts: skipped, no openssl command to make a test certificate');

let dir = '';
let server: Server | undefined;
let port = 0;
const sni: (string | false)[] = [];

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

beforeAll(async () => {
  if (!OPENSSL) return;
  dir = mkdtempSync(join(tmpdir(), 'codecall-egress-tls-'));
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '1',
    '-subj',
    '/CN=codecall test CA',
  );
  openssl('req', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=egress.test');
  writeFileSync(join(dir, 'leaf.ext'), 'subjectAltName=DNS:egress.test\nextendedKeyUsage=serverAuth\n');
  openssl(
    'x509',
    '-req',
    '-in',
    'leaf.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'leaf.pem',
    '-days',
    '1',
    '-extfile',
    'leaf.ext',
  );
  const tlsServer = createServer(
    { key: readFileSync(join(dir, 'leaf.key')), cert: readFileSync(join(dir, 'leaf.pem')) },
    (req, res) => {
      sni.push((req.socket as { servername?: string | false }).servername ?? false);
      res.end('over tls');
    },
  );
  server = tlsServer;
  await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
  port = (tlsServer.address() as AddressInfo).port;
});

afterAll(async () => {
  if (server) {
    const s = server;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!OPENSSL)('egress over TLS', () => {
  it('refuses a certificate no trusted CA signed (EGRESS_FAILED, tls)', async () => {
    const error = await rejection(
      localEgress({ lookup: lookupOf({ 'egress.test': '127.0.0.1' }) }).fetch(
        get(`https://egress.test:${port}/`),
        access([`egress.test:${port}`]),
        { signal: never() },
      ),
    );
    expect(error).toMatchObject({ code: 'EGRESS_FAILED', details: { cause: 'tls', host: 'egress.test' } });
  });

  it('with the CA trusted: reaches the pinned address, sends the name as SNI, checks the certificate against it', async () => {
    const jobs = [
      { url: `https://egress.test:${port}/`, allow: [`egress.test:${port}`] },
      { url: `https://other.test:${port}/`, allow: [`other.test:${port}`] },
    ];
    // Asynchronously: the server answering is in this process.
    const { stdout: out } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(new URL('./tls-client.ts', import.meta.url)), JSON.stringify(jobs)],
      {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') },
        encoding: 'utf8',
        timeout: 20_000,
      },
    );
    const [ok, mismatch] = JSON.parse(out) as [Record<string, unknown>, Record<string, unknown>];
    expect(ok).toEqual({ status: 200, body: 'over tls', allowedBy: `egress.test:${port}` });
    expect(sni).toContain('egress.test');
    // The same address, but the certificate is not other.test's.
    expect(mismatch).toMatchObject({ code: 'EGRESS_FAILED', details: { cause: 'tls', host: 'other.test' } });
    expect(String(mismatch.message)).toMatch(/other\.test/);
  });
});
