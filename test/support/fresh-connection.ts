/**
 * A POST on a connection of its own (no keep-alive pool): `cascade serve --workers N` hands
 * each new connection to one worker in turn, so requests sent this way reach every worker —
 * sent over fetch's pooled connection, they would all stay with one.
 */
import { request } from 'node:http';

export function postOnNewConnection(
  url: string,
  body: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
