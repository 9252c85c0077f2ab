import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * A minimal WebSocket server on 127.0.0.1 that records the text messages clients send
 * (RFC 6455: handshake, masked client frames, 7/16/64-bit lengths; no extensions), standing in
 * for the operator's inspector in tests.
 */

const HANDSHAKE_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export interface WebSocketSink {
  url: string;
  messages: string[];
  /** Resolves once a message satisfies `predicate` (checked on every message). */
  waitFor(predicate: (message: string) => boolean): Promise<string>;
  close(): Promise<void>;
}

export async function startWebSocketSink(): Promise<WebSocketSink> {
  const messages: string[] = [];
  const waiters: Array<{ predicate: (message: string) => boolean; resolve: (message: string) => void }> = [];
  const sockets = new Set<Duplex>();
  const server = createServer((_req, res) => res.writeHead(426).end());

  function received(message: string): void {
    messages.push(message);
    for (const waiter of [...waiters]) {
      if (!waiter.predicate(message)) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(message);
    }
  }

  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const accept = createHash('sha1').update(`${req.headers['sec-websocket-key']}${HANDSHAKE_GUID}`).digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (let frame = readFrame(buffered); frame !== undefined; frame = readFrame(buffered)) {
        buffered = buffered.subarray(frame.length);
        if (frame.opcode === 0x1) received(frame.payload.toString('utf8'));
        if (frame.opcode === 0x8) socket.end();
      }
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    messages,
    waitFor: (predicate) => {
      const seen = messages.find(predicate);
      return seen !== undefined ? Promise.resolve(seen) : new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** One complete frame at the start of `data`, or undefined if more bytes are needed. */
function readFrame(data: Buffer): { opcode: number; payload: Buffer; length: number } | undefined {
  if (data.length < 2) return undefined;
  const opcode = data[0]! & 0x0f;
  const masked = (data[1]! & 0x80) !== 0;
  let length = data[1]! & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (data.length < 4) return undefined;
    length = data.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (data.length < 10) return undefined;
    length = Number(data.readBigUInt64BE(2));
    offset = 10;
  }
  const maskOffset = offset;
  if (masked) offset += 4;
  if (data.length < offset + length) return undefined;
  const payload = Buffer.from(data.subarray(offset, offset + length));
  if (masked) for (let i = 0; i < payload.length; i++) payload[i]! ^= data[maskOffset + (i % 4)]!;
  return { opcode, payload, length: offset + length };
}
