import { connect } from 'node:net';

/**
 * One raw HTTP exchange on a fresh socket: writes `bytes`, then collects whatever the server
 * writes until it closes the socket or `waitMs` passes. For what a client library would not
 * send, or would not let a test see (a request whose body is never finished, a reply to a
 * request refused before its body was read).
 */
export function rawExchange(url: string, bytes: string, { waitMs = 5_000 } = {}): Promise<{ text: string; closed: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed: false });
    }, waitMs);
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
    socket.write(bytes);
  });
}

/** An HTTP response as rawExchange collected it: the status, the headers (lower-case names) and the JSON body (null when not JSON). */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: { error?: { code?: string; message?: string; request_id?: string } } | null;
}

export function parseRaw(text: string): RawResponse {
  const [head = '', ...rest] = text.split('\r\n\r\n');
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body: RawResponse['body'];
  try {
    body = JSON.parse(rest.join('\r\n\r\n')) as RawResponse['body'];
  } catch {
    body = null;
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}
