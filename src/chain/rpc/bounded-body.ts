/**
 * Reading a JSON-RPC response body with a byte limit, refused while it streams: a node that
 * answers with hundreds of MiB must cost the server at most the limit, never the whole body.
 *
 * The limit follows from what the client asks for. The largest answer is a getAccountInfo of one
 * dataSlice of at most MAX_ACCOUNT_SLICE_BYTES (tracker-reader.ts reads entries in such slices),
 * base64 in JSON: 4/3 of the slice, plus a little JSON around it. Every other answer (a header
 * slice, a signature status, a blockhash, 100 signatures, one transaction with its logs) is
 * smaller than that. Twice that, plus room for the JSON, is the limit: about 200 KiB.
 */

/** The largest dataSlice a getAccountInfo asks for. */
export const MAX_ACCOUNT_SLICE_BYTES = 64 * 1024;
/** JSON around the data (context, owner, lamports, ...) and a transaction's logs, generously. */
const JSON_OVERHEAD_BYTES = 16 * 1024;
export const MAX_RESPONSE_BYTES = 2 * (Math.ceil(MAX_ACCOUNT_SLICE_BYTES / 3) * 4 + JSON_OVERHEAD_BYTES);

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
