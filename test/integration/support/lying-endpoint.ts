import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Keypair, NONCE_ACCOUNT_LENGTH, type PublicKey, SystemProgram } from '@solana/web3.js';
import bs58 from 'bs58';
import { NONCE_ACCOUNT_RENT_LAMPORTS } from '../../../src/chain/nonce-account.js';

/**
 * A JSON-RPC endpoint in front of a devnet chain that lies about one authority's signing lease
 * (docs/chain-client.md "The lease"), for the process tests of what one node cannot make a
 * server do. Every request is forwarded to the real endpoint and answered with its answer, except
 * what `says` rewrites:
 *
 * - `made_up`: getAccountInfo of the lease shows it held by the authority with a made-up nonce value;
 * - `other_owner`: the lease shows as an account of another program (unusable);
 * - `free`: the lease shows as no account;
 * - `deceive`: `free` until a transaction is sent; a sendTransaction is accepted and never
 *   forwarded (its signature returned), its getSignatureStatuses answered "confirmed", and the
 *   lease then shows held with a made-up value, as if the taking had landed.
 *
 * The context slot of a rewritten answer is the real one: the lie is at a slot the node has.
 */

type LeaseLie = 'honest' | 'made_up' | 'other_owner' | 'free' | 'deceive';

export interface LyingEndpoint {
  url: string;
  says: LeaseLie;
  /** Transactions accepted and never forwarded. */
  readonly swallowed: string[];
  /** Lease reads answered with a lie. */
  lies: number;
  close(): Promise<void>;
}

interface RpcRequest {
  jsonrpc: '2.0';
  id: unknown;
  method: string;
  params?: unknown[];
}

export async function startLyingEndpoint(upstream: string, lease: PublicKey, authority: PublicKey): Promise<LyingEndpoint> {
  const madeUp = Keypair.generate().publicKey.toBytes();
  const endpoint: LyingEndpoint = { url: '', says: 'honest', swallowed: [], lies: 0, close: async () => undefined };

  async function forward(body: string): Promise<unknown> {
    const response = await fetch(upstream, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    return response.json();
  }

  function leaseAnswer(real: { result?: { context: unknown; value: unknown } }): unknown {
    const lie = endpoint.says === 'deceive' ? (endpoint.swallowed.length === 0 ? 'free' : 'made_up') : endpoint.says;
    if (lie === 'honest' || real.result === undefined) return real;
    endpoint.lies += 1;
    const value =
      lie === 'free'
        ? null
        : lie === 'made_up'
          ? accountValue(SystemProgram.programId, heldData(authority, madeUp))
          : accountValue(Keypair.generate().publicKey, new Uint8Array(NONCE_ACCOUNT_LENGTH));
    return { ...real, result: { ...real.result, value } };
  }

  async function answer(request: RpcRequest, body: string): Promise<unknown> {
    const params = request.params ?? [];
    if (endpoint.says === 'deceive' && request.method === 'sendTransaction') {
      const wire = Buffer.from(String(params[0]), 'base64');
      const signature = bs58.encode(wire.subarray(1, 65));
      endpoint.swallowed.push(signature);
      return { jsonrpc: '2.0', id: request.id, result: signature };
    }
    const real = (await forward(body)) as { result?: { context: { slot: number }; value: unknown } };
    if (request.method === 'getAccountInfo' && params[0] === lease.toBase58()) return leaseAnswer(real);
    if (request.method === 'getSignatureStatuses' && real.result !== undefined) {
      const asked = (params[0] as string[]) ?? [];
      const slot = real.result.context.slot;
      const value = (real.result.value as unknown[]).map((status, i) =>
        endpoint.swallowed.includes(asked[i]!)
          ? { slot, confirmations: null, err: null, status: { Ok: null }, confirmationStatus: 'confirmed' }
          : status,
      );
      return { ...real, result: { ...real.result, value } };
    }
    return real;
  }

  const server: Server = createServer((req, res) => {
    void (async () => {
      try {
        const body = await readBody(req);
        const parsed = JSON.parse(body) as RpcRequest | RpcRequest[];
        // A batch goes through as it is: the server under test sends single requests for what is lied about.
        const reply = Array.isArray(parsed) ? await forward(body) : await answer(parsed, body);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
      } catch (err) {
        res.writeHead(502, { 'content-type': 'text/plain' }).end(String(err));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  endpoint.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return endpoint;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** An initialized nonce account's 80 bytes (Versions::Current, State::Initialized): the authority, the nonce value, 5,000 lamports a signature. */
function heldData(authority: PublicKey, nonce: Uint8Array): Uint8Array {
  const data = Buffer.alloc(NONCE_ACCOUNT_LENGTH);
  data.writeUInt32LE(1, 0);
  data.writeUInt32LE(1, 4);
  Buffer.from(authority.toBytes()).copy(data, 8);
  Buffer.from(nonce).copy(data, 40);
  data.writeBigUInt64LE(5_000n, 72);
  return data;
}

function accountValue(owner: PublicKey, data: Uint8Array): unknown {
  return {
    data: [Buffer.from(data).toString('base64'), 'base64'],
    executable: false,
    lamports: NONCE_ACCOUNT_RENT_LAMPORTS,
    owner: owner.toBase58(),
    rentEpoch: 0,
    space: data.length,
  };
}
