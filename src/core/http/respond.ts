import { Buffer } from 'node:buffer';
import type { ServerResponse } from 'node:http';
import { errorBody } from '../protocol/error-body.js';

const JSON_TYPE = 'application/json';

/** Writes a complete response with an explicit length (no chunked encoding). */
export function sendBytes(
  res: ServerResponse,
  status: number,
  contentType: string,
  body: Buffer | string,
): void {
  if (res.headersSent || res.destroyed) return;
  // The imported Buffer: the global one is a getter, read through a generic IC on every call.
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  res.writeHead(status, { 'content-type': contentType, 'content-length': length });
  res.end(body);
}

/** Writes a JSON-RPC error object answer. */
export function sendRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  idJson: string,
): void {
  sendBytes(res, status, JSON_TYPE, errorBody(code, message, idJson));
}

/** Writes a JSON document. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  sendBytes(res, status, JSON_TYPE, JSON.stringify(value));
}

/** A plain-text status answer for non-RPC routes (404, 405). */
export function sendStatus(
  res: ServerResponse,
  status: number,
  text: string,
  allow?: string,
): void {
  if (allow) res.setHeader('allow', allow);
  sendBytes(res, status, 'text/plain; charset=utf-8', text);
}
