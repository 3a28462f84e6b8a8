/** The part of negotiator 1.x cascade uses (the package ships no types of its own). */
declare module 'negotiator' {
  interface NegotiatorRequest {
    readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  }
  interface EncodingOptions {
    /** Encodings to pick, in this order, among those the client rates equally. */
    readonly preferred?: readonly string[];
  }
  /** RFC 9110 content negotiation from a request's Accept-* headers. */
  export default class Negotiator {
    constructor(request: NegotiatorRequest);
    /** The best of `available` by the client's Accept-Encoding; undefined when none is acceptable. */
    encoding(available: readonly string[], options?: EncodingOptions): string | undefined;
  }
}
