/**
 * Reading a JSON-RPC response body with a byte limit, refused while it streams: a node that
 * answers with hundreds of MiB must cost the server at most the limit, never the whole body.
 *
 * The limit follows from what the client asks for. The most account data one read asks for is
 * MAX_ACCOUNT_SLICE_BYTES: one getAccountInfo's dataSlice (tracker-reader.ts reads entries in
 * such slices), or a getMultipleAccounts's addresses x its one dataSlice (chain-rpc.ts refuses to
 * ask more). Base64 in JSON, that is 4/3 of it, plus JSON around each account (at most
 * MAX_MULTIPLE_ACCOUNTS of them: owner, lamports, space, rentEpoch, each one's base64 padding)
 * and around the answer. Every other answer (a signature status, a blockhash, 100 signatures,
 * one transaction with its logs) is smaller than that. Twice that is the limit: about 253 KiB.
 */

/** The most account data one read asks for (a getAccountInfo's dataSlice; a getMultipleAccounts's addresses x dataSlice). */
export const MAX_ACCOUNT_SLICE_BYTES = 64 * 1024;
/** Most addresses one getMultipleAccounts takes: a node refuses more (Agave's MAX_MULTIPLE_ACCOUNTS). */
export const MAX_MULTIPLE_ACCOUNTS = 100;
/** The JSON of one account around its data: about 190 bytes with every number at u64's 20 digits, 256 with room. */
const ACCOUNT_JSON_BYTES = 256;
/** JSON around the accounts (context, the JSON-RPC envelope) and a transaction's logs, generously. */
const JSON_OVERHEAD_BYTES = 16 * 1024;
export const MAX_RESPONSE_BYTES = 2 * (Math.ceil(MAX_ACCOUNT_SLICE_BYTES / 3) * 4 + MAX_MULTIPLE_ACCOUNTS * ACCOUNT_JSON_BYTES + JSON_OVERHEAD_BYTES);

export type BoundedBody = { kind: 'text'; text: string } | { kind: 'too_large'; receivedBytes: number };

/**
 * The body as text when it is at most `maxBytes`; otherwise `too_large` with the bytes received
 * when it was refused (the Content-Length when that already says so, before anything is read).
 * The rest of a refused body is cancelled, never buffered.
 */
export async function readBoundedBody(response: Response, maxBytes: number): Promise<BoundedBody> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isSafeInteger(declared) && declared > maxBytes) {
    await response.body?.cancel();
    return { kind: 'too_large', receivedBytes: declared };
  }
  if (response.body === null) return { kind: 'text', text: '' };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let receivedBytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    receivedBytes += value.byteLength;
    if (receivedBytes > maxBytes) {
      await reader.cancel();
      return { kind: 'too_large', receivedBytes };
    }
    chunks.push(value);
  }
  return { kind: 'text', text: new TextDecoder().decode(Buffer.concat(chunks)) };
}
