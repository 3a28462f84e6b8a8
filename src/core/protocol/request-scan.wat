;; The request path's look at a small JSON-RPC body (request-scan.ts), as WebAssembly: in one
;; call, what method-scan.ts scanMethod and request-ask.ts scanRequestRest read in JavaScript
;; — the leading `"method"` member's plain ASCII name, whether another `"method"` key or a `\u`
;; escape follows it, and the Solana head ask's tokens (`"confirmed"`, `"processed"`,
;; `"minContextSlot"`) — plus two things JavaScript paid for separately: whether the whole body
;; is ASCII (then it is valid UTF-8 and needs no isUtf8), and whether the name is the one the
;; last scan found (then its string is reused, not cut again from the body). When the object's
;; first member is another one, it reads only the ASCII check and the ask's tokens: the method
;; is then found by answer-scan.wat's validator (methodName), and `sameName` compares it with
;; the last one here.
;;
;; Memory: the body at [0, n), n ≤ 4096; the last name found at 4096 (≤ 128 bytes, its length
;; in $lastLength); the offset of the first `"minContextSlot"` token at 4352. Bytes past n are
;; left over from earlier bodies: SIMD loads read them, and their lanes are masked off.
;; `npm run build:wasm` turns this file into request-scan-wasm.ts (a test checks they agree).
(module
  (memory (export "memory") 1)
  ;; Length of the name kept at 4096; -1 before the first scan that found one.
  (global $lastLength (mut i32) (i32.const -1))

  ;; The first index at or after $i (below $n) that is not JSON whitespace.
  (func $space (param $i i32) (param $n i32) (result i32)
    (local $c i32)
    (block $out
      (loop $next
        (br_if $out (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $c (i32.load8_u (local.get $i)))
        (br_if $out (i32.gt_u (local.get $c) (i32.const 0x20)))
        (br_if $out
          (i32.eqz
            (i32.or
              (i32.or (i32.eq (local.get $c) (i32.const 0x20)) (i32.eq (local.get $c) (i32.const 0x0a)))
              (i32.or (i32.eq (local.get $c) (i32.const 0x0d)) (i32.eq (local.get $c) (i32.const 0x09))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $i))

  ;; Whether the name at [$from, $from + $length) is the one kept at 4096; when it is not, it
  ;; becomes the one kept.
  (func $sameAsLast (param $from i32) (param $length i32) (result i32)
    (local $k i32)
    (block $differs
      (br_if $differs (i32.ne (local.get $length) (global.get $lastLength)))
      ;; Eight bytes a step, then the rest one by one.
      (loop $word
        (if (i32.le_u (i32.add (local.get $k) (i32.const 8)) (local.get $length))
          (then
            (br_if $differs
              (i64.ne
                (i64.load (i32.add (local.get $from) (local.get $k)))
                (i64.load (i32.add (i32.const 4096) (local.get $k)))))
            (local.set $k (i32.add (local.get $k) (i32.const 8)))
            (br $word))))
      (loop $next
        (if (i32.ge_u (local.get $k) (local.get $length)) (then (return (i32.const 1))))
        (br_if $differs
          (i32.ne
            (i32.load8_u (i32.add (local.get $from) (local.get $k)))
            (i32.load8_u (i32.add (i32.const 4096) (local.get $k)))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $next)))
    (local.set $k (i32.const 0))
    (block $copied
      (loop $next
        (br_if $copied (i32.ge_u (local.get $k) (local.get $length)))
        (i32.store8
          (i32.add (i32.const 4096) (local.get $k))
          (i32.load8_u (i32.add (local.get $from) (local.get $k))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $next)))
    (global.set $lastLength (local.get $length))
    (i32.const 0))

  ;; The token pass over [$from, $n), sixteen bytes a step: -1 when a byte is ≥ 0x80, else
  ;; $flags with the ask's bits (20 `"confirmed"`, 21 `"processed"`, 22 a `"minContextSlot"`
  ;; token, its offset stored at 4352). With the method's name read (its closing quote at
  ;; $close, the pass starting at its opening quote), also -1 for a `"method"` token past the
  ;; name or a `\u`. Each quote or backslash may start a token. (Before the name's opening
  ;; quote lie only `{`, `"method"`, `:` and whitespace, and inside it there is no quote or
  ;; backslash, so a token at the opening quote is the name itself, quoted; a pass with no name
  ;; read starts at the first member's quote, after `{` and whitespace.)
  (func $tokens (param $from i32) (param $n i32) (param $close i32) (param $flags i32) (result i32)
    (local $p i32) (local $v v128) (local $high i32) (local $stops i32) (local $k i32)
    (local $c i32) (local $minAt i32)
    (local.set $minAt (i32.const -1))
    (local.set $p (local.get $from))
    (block $done
      (loop $chunk
        (br_if $done (i32.ge_u (local.get $p) (local.get $n)))
        (local.set $v (v128.load (local.get $p)))
        (local.set $high (i8x16.bitmask (local.get $v)))
        (local.set $stops
          (i32.or
            (i8x16.bitmask (i8x16.eq (local.get $v) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22)))
            (i8x16.bitmask (i8x16.eq (local.get $v) (v128.const i8x16 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c)))))
        ;; Lanes past the body's end are left-over bytes.
        (if (i32.gt_u (i32.add (local.get $p) (i32.const 16)) (local.get $n))
          (then
            (local.set $c (i32.sub (i32.shl (i32.const 1) (i32.sub (local.get $n) (local.get $p))) (i32.const 1)))
            (local.set $high (i32.and (local.get $high) (local.get $c)))
            (local.set $stops (i32.and (local.get $stops) (local.get $c)))))
        (if (local.get $high) (then (return (i32.const -1))))
        (block $chunkDone
          (loop $stop
            (br_if $chunkDone (i32.eqz (local.get $stops)))
            (local.set $k (i32.add (local.get $p) (i32.ctz (local.get $stops))))
            (local.set $stops (i32.and (local.get $stops) (i32.sub (local.get $stops) (i32.const 1))))
            (if (i32.eq (i32.load8_u (local.get $k)) (i32.const 0x5c))
              (then
                ;; `\u` (only after the name: there is no backslash in it), when the method
                ;; was read here.
                (if (i32.and
                      (i32.ge_s (local.get $close) (i32.const 0))
                      (i32.and
                        (i32.lt_u (i32.add (local.get $k) (i32.const 1)) (local.get $n))
                        (i32.eq (i32.load8_u (i32.add (local.get $k) (i32.const 1))) (i32.const 0x75))))
                  (then (return (i32.const -1))))
                (br $stop)))
            ;; A quote: the letter after it says which token it may start (most quotes close
            ;; a string, or open a key no token begins like, and cost one load).
            (local.set $c (i32.load8_u (i32.add (local.get $k) (i32.const 1))))
            (if (i32.eq (local.get $c) (i32.const 0x6d))
              (then
                ;; `"method"` past the name's closing quote is a second method key (with no
                ;; name read here, $close is -1: no index is past it, unsigned).
                (if (i32.lt_u (i32.add (local.get $k) (i32.const 7)) (local.get $n))
                  (then
                    (if (i32.eq (i32.load (i32.add (local.get $k) (i32.const 1))) (i32.const 0x6874656d))
                      (then
                        (if (i32.eq (i32.load16_u (i32.add (local.get $k) (i32.const 5))) (i32.const 0x646f))
                          (then
                            (if (i32.eq (i32.load8_u (i32.add (local.get $k) (i32.const 7))) (i32.const 0x22))
                              (then
                                (if (i32.gt_u (local.get $k) (local.get $close))
                                  (then (return (i32.const -1))))
                                (br $stop)))))))))
                ;; `"minContextSlot"`: the first one is where the ask's slot is read.
                (if (i32.lt_s (local.get $minAt) (i32.const 0))
                  (then
                    (if (i32.lt_u (i32.add (local.get $k) (i32.const 15)) (local.get $n))
                      (then
                        (if (i64.eq (i64.load (i32.add (local.get $k) (i32.const 1))) (i64.const 0x65746e6f436e696d))
                          (then
                            (if (i32.and
                                  (i32.and
                                    (i32.eq (i32.load (i32.add (local.get $k) (i32.const 9))) (i32.const 0x6c537478))
                                    (i32.eq (i32.load16_u (i32.add (local.get $k) (i32.const 13))) (i32.const 0x746f)))
                                  (i32.eq (i32.load8_u (i32.add (local.get $k) (i32.const 15))) (i32.const 0x22)))
                              (then (local.set $minAt (local.get $k))))))))))
                (br $stop)))
            ;; `"confirmed"` or `"processed"`.
            (if (i32.or (i32.eq (local.get $c) (i32.const 0x63)) (i32.eq (local.get $c) (i32.const 0x70)))
              (then
                (if (i32.lt_u (i32.add (local.get $k) (i32.const 10)) (local.get $n))
                  (then
                    (if (i32.and
                          (i32.eq (i32.load8_u (i32.add (local.get $k) (i32.const 10))) (i32.const 0x22))
                          (i32.eq (i32.load8_u (i32.add (local.get $k) (i32.const 9))) (i32.const 0x64)))
                      (then
                        (if (i64.eq (i64.load (i32.add (local.get $k) (i32.const 1))) (i64.const 0x656d7269666e6f63))
                          (then (local.set $flags (i32.or (local.get $flags) (i32.const 0x100000)))))
                        (if (i64.eq (i64.load (i32.add (local.get $k) (i32.const 1))) (i64.const 0x65737365636f7270))
                          (then (local.set $flags (i32.or (local.get $flags) (i32.const 0x200000)))))))))))
            (br $stop)))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $chunk)))
    (if (i32.ge_s (local.get $minAt) (i32.const 0))
      (then
        (i32.store (i32.const 4352) (local.get $minAt))
        (local.set $flags (i32.or (local.get $flags) (i32.const 0x400000)))))
    (local.get $flags))

  ;; The body at [0, $n): -1 when the scan is unsure (the caller parses), else, packed:
  ;; bits 0–11 the index of the name's closing quote, 12–19 the name's length, then flags —
  ;; 20 `"confirmed"` seen, 21 `"processed"` seen, 22 a `"minContextSlot"` token (its offset
  ;; at 4352), 23 the name is the last scan's, 24 the object's first member is not `"method"`:
  ;; the body is all ASCII and the ask's bits are read, but no name (bits 0–19 are zero).
  (func (export "scan") (param $n i32) (result i32)
    (local $i i32) (local $open i32) (local $close i32) (local $limit i32) (local $c i32)
    (local $flags i32)
    ;; { "method" : "
    (local.set $i (i32.const 0))
    (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20))
      (then (local.set $i (call $space (local.get $i) (local.get $n)))))
    (if (i32.ge_u (local.get $i) (local.get $n)) (then (return (i32.const -1))))
    (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x7b)) (then (return (i32.const -1))))
    (local.set $i (i32.add (local.get $i) (i32.const 1)))
    (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20))
      (then (local.set $i (call $space (local.get $i) (local.get $n)))))
    (if (i32.lt_s (i32.sub (local.get $n) (local.get $i)) (i32.const 8)) (then (return (i32.const -1))))
    (if (i64.ne (i64.load (local.get $i)) (i64.const 0x22646f6874656d22))
      (then
        ;; Another member first (`"jsonrpc"`, `"id"`: most clients' order): only the ASCII check
        ;; and the ask's tokens, over the whole object; the method is the validator's to find
        ;; (answer-scan.wat methodName), which reads the text as JSON.parse does.
        (return (call $tokens (local.get $i) (local.get $n) (i32.const -1) (i32.const 0x1000000)))))
    (local.set $i (i32.add (local.get $i) (i32.const 8)))
    (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20))
      (then (local.set $i (call $space (local.get $i) (local.get $n)))))
    (if (i32.ge_u (local.get $i) (local.get $n)) (then (return (i32.const -1))))
    (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x3a)) (then (return (i32.const -1))))
    (local.set $i (i32.add (local.get $i) (i32.const 1)))
    (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20))
      (then (local.set $i (call $space (local.get $i) (local.get $n)))))
    (if (i32.ge_u (local.get $i) (local.get $n)) (then (return (i32.const -1))))
    (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x22)) (then (return (i32.const -1))))
    ;; The name: plain (no escape, no raw control byte), its closing quote within 130 bytes of
    ;; the opening one (≤ 128 bytes of name).
    (local.set $open (local.get $i))
    (local.set $limit (i32.add (local.get $open) (i32.const 130)))
    (if (i32.gt_u (local.get $limit) (local.get $n)) (then (local.set $limit (local.get $n))))
    (local.set $close (i32.add (local.get $open) (i32.const 1)))
    (block $found
      (loop $next
        (if (i32.ge_u (local.get $close) (local.get $limit)) (then (return (i32.const -1))))
        (local.set $c (i32.load8_u (local.get $close)))
        (br_if $found (i32.eq (local.get $c) (i32.const 0x22)))
        (if (i32.or (i32.eq (local.get $c) (i32.const 0x5c)) (i32.lt_u (local.get $c) (i32.const 0x20)))
          (then (return (i32.const -1))))
        (local.set $close (i32.add (local.get $close) (i32.const 1)))
        (br $next)))
    (local.set $flags (call $tokens (local.get $open) (local.get $n) (local.get $close) (i32.const 0)))
    (if (i32.lt_s (local.get $flags) (i32.const 0)) (then (return (i32.const -1))))
    (if (call $sameAsLast
          (i32.add (local.get $open) (i32.const 1))
          (i32.sub (i32.sub (local.get $close) (local.get $open)) (i32.const 1)))
      (then (local.set $flags (i32.or (local.get $flags) (i32.const 0x800000)))))
    (i32.or
      (local.get $flags)
      (i32.or
        (local.get $close)
        (i32.shl (i32.sub (i32.sub (local.get $close) (local.get $open)) (i32.const 1)) (i32.const 12)))))

  ;; Whether the name at [$from, $from + $length) is the last one found (see $sameAsLast, which
  ;; keeps it when it is not): for a name the validator found in the body scanned last.
  (func (export "sameName") (param $from i32) (param $length i32) (result i32)
    (call $sameAsLast (local.get $from) (local.get $length)))
)
