/**
 * agave's `minContextSlot`: a request whose config asks for a slot the node has not reached
 * is answered -32016 with the node's `contextSlot`, as a lagging validator does.
 */
import { isRecord, type MethodContext } from './method-spec.js';
import { NodeErrorAnswer } from './node-errors.js';

/** Throws the -32016 answer when a config in `params` asks for a slot beyond the node's. */
export function checkMinContextSlot(params: unknown, ctx: MethodContext): void {
  if (!Array.isArray(params)) return;
  for (const param of params) {
    if (!isRecord(param) || typeof param.minContextSlot !== 'number') continue;
    const slot = ctx.chain.slot();
    if (param.minContextSlot > slot) {
      throw new NodeErrorAnswer({
        code: -32016,
        message: 'Minimum context slot has not been reached',
        data: { contextSlot: slot },
      });
    }
  }
}
