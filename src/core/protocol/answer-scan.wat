;; The scans of a small upstream answer (answer-scan.ts), as WebAssembly: jsonShape's check
;; (json-shape.ts: the same verdicts, byte for byte, as the JavaScript scan it replaced, which
;; gives exactly what JSON.parse of the UTF-8 text gives) and the search for the Solana
;; envelope's slot (head-scan.ts contextSlotOf).
;; A JS loop over a Buffer costs ~35 instructions a byte here (each element load re-checks the
;; typed array); here strings go sixteen bytes a step (SIMD), and the copy in is one memmove.
;;
;; Memory: the text at [0, n); the closer of each open container at 65280 + depth. Bytes past
;; n are left over from earlier texts: loads may read them (whitespace is tested inline before
;; a call, strings sixteen bytes at a time) but never take them for the text.
;; `npm run build:wasm` turns this file into answer-scan-wasm.ts (a test checks they agree).
(module
  (memory (export "memory") 1)
  ;; A top-level member name is `error`, or has an escape that may spell it.
  (global $errorName (mut i32) (i32.const 0))
  ;; The string $string last read held a backslash escape.
  (global $escaped (mut i32) (i32.const 0))
  ;; Top-level members named exactly `method` (no escape) the last shape scan met, and where
  ;; the last one's name ended (for a request body: rpc-request.ts reads its value).
  (global $methods (mut i32) (i32.const 0))
  (global $methodEnd (mut i32) (i32.const 0))

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

  (func $isHex (param $c i32) (result i32)
    (i32.or
      (i32.lt_u (i32.sub (local.get $c) (i32.const 0x30)) (i32.const 10))
      (i32.lt_u (i32.sub (i32.or (local.get $c) (i32.const 0x20)) (i32.const 0x61)) (i32.const 6))))

  ;; " \ / b f n r t
  (func $isSimpleEscape (param $c i32) (result i32)
    (i32.or
      (i32.or
        (i32.or (i32.eq (local.get $c) (i32.const 0x22)) (i32.eq (local.get $c) (i32.const 0x5c)))
        (i32.or (i32.eq (local.get $c) (i32.const 0x2f)) (i32.eq (local.get $c) (i32.const 0x62))))
      (i32.or
        (i32.or (i32.eq (local.get $c) (i32.const 0x66)) (i32.eq (local.get $c) (i32.const 0x6e)))
        (i32.or (i32.eq (local.get $c) (i32.const 0x72)) (i32.eq (local.get $c) (i32.const 0x74))))))

  ;; The string whose opening quote is at $q: index just past its closing quote, or -1 (raw
  ;; control character, bad escape, no closing quote before $n). Sets $escaped.
  (func $string (param $q i32) (param $n i32) (result i32)
    (local $i i32) (local $c i32) (local $k i32) (local $v v128) (local $stops i32)
    (global.set $escaped (i32.const 0))
    (local.set $i (i32.add (local.get $q) (i32.const 1)))
    (loop $next
      ;; Sixteen bytes at a time to the first quote, backslash or control byte. Bytes past $n
      ;; are left over from earlier texts: a stop found there means none before $n.
      (local.set $v (v128.load (local.get $i)))
      (local.set $stops
        (i8x16.bitmask
          (v128.or
            (v128.or
              (i8x16.eq (local.get $v) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22))
              (i8x16.eq (local.get $v) (v128.const i8x16 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c)))
            (i8x16.lt_u (local.get $v) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20)))))
      (if (i32.eqz (local.get $stops))
        (then
          (local.set $i (i32.add (local.get $i) (i32.const 16)))
          (if (i32.ge_u (local.get $i) (local.get $n)) (then (return (i32.const -1))))
          (br $next)))
      (local.set $i (i32.add (local.get $i) (i32.ctz (local.get $stops))))
      (if (i32.ge_u (local.get $i) (local.get $n)) (then (return (i32.const -1))))
      (local.set $c (i32.load8_u (local.get $i)))
      (if (i32.eq (local.get $c) (i32.const 0x22))
        (then (return (i32.add (local.get $i) (i32.const 1)))))
      (if (i32.ne (local.get $c) (i32.const 0x5c)) (then (return (i32.const -1))))
      (global.set $escaped (i32.const 1))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (if (i32.ge_u (local.get $i) (local.get $n)) (then (return (i32.const -1))))
      (local.set $c (i32.load8_u (local.get $i)))
      (if (i32.eq (local.get $c) (i32.const 0x75))
        (then
          ;; \uXXXX: four hex digits, all before $n.
          (if (i32.ge_u (i32.add (local.get $i) (i32.const 4)) (local.get $n))
            (then (return (i32.const -1))))
          (local.set $k (i32.const 1))
          (loop $hex
            (if (i32.eqz (call $isHex (i32.load8_u (i32.add (local.get $i) (local.get $k)))))
              (then (return (i32.const -1))))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br_if $hex (i32.le_u (local.get $k) (i32.const 4))))
          (local.set $i (i32.add (local.get $i) (i32.const 5)))
          (br $next)))
      (if (i32.eqz (call $isSimpleEscape (local.get $c))) (then (return (i32.const -1))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next))
    (unreachable))

  (func $digitsEnd (param $i i32) (param $n i32) (result i32)
    (block $out
      (loop $next
        (br_if $out (i32.ge_u (local.get $i) (local.get $n)))
        (br_if $out (i32.ge_u (i32.sub (i32.load8_u (local.get $i)) (i32.const 0x30)) (i32.const 10)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $i))

  ;; -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at $i (< $n): index just past it, or -1.
  (func $number (param $i i32) (param $n i32) (result i32)
    (local $c i32) (local $from i32)
    (if (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x2d))
      (then (local.set $i (i32.add (local.get $i) (i32.const 1)))))
    (if (i32.ge_u (local.get $i) (local.get $n)) (then (return (i32.const -1))))
    (local.set $c (i32.load8_u (local.get $i)))
    (if (i32.eq (local.get $c) (i32.const 0x30))
      (then (local.set $i (i32.add (local.get $i) (i32.const 1))))
      (else
        (if (i32.ge_u (i32.sub (local.get $c) (i32.const 0x31)) (i32.const 9))
          (then (return (i32.const -1))))
        (local.set $i (call $digitsEnd (i32.add (local.get $i) (i32.const 1)) (local.get $n)))))
    (if (i32.lt_u (local.get $i) (local.get $n))
      (then
        (if (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x2e))
          (then
            (local.set $from (i32.add (local.get $i) (i32.const 1)))
            (local.set $i (call $digitsEnd (local.get $from) (local.get $n)))
            (if (i32.eq (local.get $i) (local.get $from)) (then (return (i32.const -1))))))))
    (if (i32.lt_u (local.get $i) (local.get $n))
      (then
        (if (i32.eq (i32.or (i32.load8_u (local.get $i)) (i32.const 0x20)) (i32.const 0x65))
          (then
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (if (i32.lt_u (local.get $i) (local.get $n))
              (then
                (local.set $c (i32.load8_u (local.get $i)))
                (if (i32.or (i32.eq (local.get $c) (i32.const 0x2b)) (i32.eq (local.get $c) (i32.const 0x2d)))
                  (then (local.set $i (i32.add (local.get $i) (i32.const 1)))))))
            (local.set $from (local.get $i))
            (local.set $i (call $digitsEnd (local.get $from) (local.get $n)))
            (if (i32.eq (local.get $i) (local.get $from)) (then (return (i32.const -1))))))))
    (local.get $i))

  ;; A number, true, false or null at $i: index just past it, or -1.
  (func $scalar (param $i i32) (param $n i32) (result i32)
    (local $c i32)
    (if (i32.ge_u (local.get $i) (local.get $n)) (then (return (i32.const -1))))
    (local.set $c (i32.load8_u (local.get $i)))
    (if (i32.or (i32.eq (local.get $c) (i32.const 0x2d))
                (i32.lt_u (i32.sub (local.get $c) (i32.const 0x30)) (i32.const 10)))
      (then (return (call $number (local.get $i) (local.get $n)))))
    ;; "true" and "null" are one little-endian word each, "false" a word and an "e".
    (if (i32.eq (local.get $c) (i32.const 0x74))
      (then
        (if (i32.and (i32.le_u (i32.add (local.get $i) (i32.const 4)) (local.get $n))
                     (i32.eq (i32.load (local.get $i)) (i32.const 0x65757274)))
          (then (return (i32.add (local.get $i) (i32.const 4)))))
        (return (i32.const -1))))
    (if (i32.eq (local.get $c) (i32.const 0x6e))
      (then
        (if (i32.and (i32.le_u (i32.add (local.get $i) (i32.const 4)) (local.get $n))
                     (i32.eq (i32.load (local.get $i)) (i32.const 0x6c6c756e)))
          (then (return (i32.add (local.get $i) (i32.const 4)))))
        (return (i32.const -1))))
    (if (i32.eq (local.get $c) (i32.const 0x66))
      (then
        (if (i32.and (i32.le_u (i32.add (local.get $i) (i32.const 5)) (local.get $n))
                     (i32.and (i32.eq (i32.load (local.get $i)) (i32.const 0x736c6166))
                              (i32.eq (i32.load8_u offset=4 (local.get $i)) (i32.const 0x65))))
          (then (return (i32.add (local.get $i) (i32.const 5)))))
        (return (i32.const -1))))
    (i32.const -1))

  ;; `"name" :` at $i (after optional whitespace): where the member's value may start, or -1.
  ;; A top-level name that is `error`, or has an escape that might spell it, sets $errorName.
  ;; (methodName relies on that too: an escaped top-level name might spell `method`.)
  (func $member (param $i i32) (param $n i32) (param $top i32) (result i32)
    (local $end i32)
    (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $space (local.get $i) (local.get $n)))))
    (if (i32.ge_u (local.get $i) (local.get $n)) (then (return (i32.const -1))))
    (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x22)) (then (return (i32.const -1))))
    (local.set $end (call $string (local.get $i) (local.get $n)))
    (if (i32.lt_s (local.get $end) (i32.const 0)) (then (return (i32.const -1))))
    (if (local.get $top)
      (then
        ;; "error": five bytes between the quotes, "erro" as one little-endian word, then "r".
        (if (i32.or
              (global.get $escaped)
              (i32.and
                (i32.eq (i32.sub (local.get $end) (local.get $i)) (i32.const 7))
                (i32.and (i32.eq (i32.load offset=1 (local.get $i)) (i32.const 0x6f727265))
                         (i32.eq (i32.load8_u offset=5 (local.get $i)) (i32.const 0x72)))))
          (then (global.set $errorName (i32.const 1))))
        ;; "method": eight bytes with the quotes, one little-endian 64-bit word.
        (if (i32.and
              (i32.eq (i32.sub (local.get $end) (local.get $i)) (i32.const 8))
              (i64.eq (i64.load (local.get $i)) (i64.const 0x22646f6874656d22)))
          (then
            (global.set $methods (i32.add (global.get $methods) (i32.const 1)))
            (global.set $methodEnd (local.get $end))))))
    (local.set $i (local.get $end))
    (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $space (local.get $i) (local.get $n)))))
    (if (i32.ge_u (local.get $i) (local.get $n)) (then (return (i32.const -1))))
    (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x3a)) (then (return (i32.const -1))))
    (i32.add (local.get $i) (i32.const 1)))

  ;; The verdict for the text at [0, $n): 0 invalid, 1 object, 2 array, 3 scalar, 4 unsure
  ;; (JsonShape in json-shape.ts). $n is at most 65280.
  (func (export "shape") (param $n i32) (result i32)
    (local $i i32) (local $first i32) (local $shape i32) (local $depth i32)
    (local $c i32) (local $closer i32)
    (local.set $i (call $space (i32.const 0) (local.get $n)))
    (if (i32.eq (local.get $i) (local.get $n)) (then (return (i32.const 0))))
    (local.set $first (i32.load8_u (local.get $i)))
    (local.set $shape
      (if (result i32) (i32.eq (local.get $first) (i32.const 0x7b))
        (then (i32.const 1))
        (else (select (i32.const 2) (i32.const 3) (i32.eq (local.get $first) (i32.const 0x5b))))))
    (global.set $errorName (i32.const 0))
    (global.set $methods (i32.const 0))
    ;; Each turn reads one value at $i, then the commas and closers that follow it.
    (loop $value
      (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $space (local.get $i) (local.get $n)))))
      (if (i32.eq (local.get $i) (local.get $n)) (then (return (i32.const 0))))
      (local.set $c (i32.load8_u (local.get $i)))
      (block $read
        (if (i32.or (i32.eq (local.get $c) (i32.const 0x7b)) (i32.eq (local.get $c) (i32.const 0x5b)))
          (then
            ;; Each open container still needs its closer in the bytes left.
            (if (i32.gt_s (i32.add (local.get $depth) (i32.const 1))
                          (i32.sub (i32.sub (local.get $n) (local.get $i)) (i32.const 1)))
              (then (return (i32.const 0))))
            (if (i32.eq (local.get $depth) (i32.const 256)) (then (return (i32.const 4))))
            (local.set $closer
              (select (i32.const 0x7d) (i32.const 0x5d) (i32.eq (local.get $c) (i32.const 0x7b))))
            (i32.store8 offset=65280 (local.get $depth) (local.get $closer))
            (local.set $depth (i32.add (local.get $depth) (i32.const 1)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $space (local.get $i) (local.get $n)))))
            (if (i32.lt_u (local.get $i) (local.get $n))
              (then
                (if (i32.eq (i32.load8_u (local.get $i)) (local.get $closer))
                  (then
                    (local.set $depth (i32.sub (local.get $depth) (i32.const 1)))
                    (local.set $i (i32.add (local.get $i) (i32.const 1)))
                    (br $read)))))
            (if (i32.eq (local.get $c) (i32.const 0x7b))
              (then
                (local.set $i
                  (call $member (local.get $i) (local.get $n) (i32.eq (local.get $depth) (i32.const 1))))))
            (if (i32.lt_s (local.get $i) (i32.const 0)) (then (return (i32.const 0))))
            (br $value)))
        (local.set $i
          (if (result i32) (i32.eq (local.get $c) (i32.const 0x22))
            (then (call $string (local.get $i) (local.get $n)))
            (else (call $scalar (local.get $i) (local.get $n)))))
        (if (i32.lt_s (local.get $i) (i32.const 0)) (then (return (i32.const 0)))))
      (loop $after
        (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $space (local.get $i) (local.get $n)))))
        (if (i32.eqz (local.get $depth))
          (then
            (if (i32.ne (local.get $i) (local.get $n)) (then (return (i32.const 0))))
            (return (select (i32.const 4) (local.get $shape) (global.get $errorName)))))
        (if (i32.eq (local.get $i) (local.get $n)) (then (return (i32.const 0))))
        (local.set $closer (i32.load8_u offset=65280 (i32.sub (local.get $depth) (i32.const 1))))
        (local.set $c (i32.load8_u (local.get $i)))
        (if (i32.eq (local.get $c) (local.get $closer))
          (then
            (local.set $depth (i32.sub (local.get $depth) (i32.const 1)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $after)))
        (if (i32.ne (local.get $c) (i32.const 0x2c)) (then (return (i32.const 0))))
        (local.set $i
          (if (result i32) (i32.eq (local.get $closer) (i32.const 0x7d))
            (then
              (call $member (i32.add (local.get $i) (i32.const 1)) (local.get $n)
                (i32.eq (local.get $depth) (i32.const 1))))
            (else (i32.add (local.get $i) (i32.const 1)))))
        (if (i32.lt_s (local.get $i) (i32.const 0)) (then (return (i32.const 0))))
        (br $value)))
    (unreachable))

  ;; After a shape scan that found an object: when it had exactly one top-level `method`
  ;; member and its value is a string without escapes, that string's quotes, packed (the
  ;; opening one's index in bits 16–31, the closing one's in 0–15); else -1. (The shape scan
  ;; checked the string: a closing quote is there, and no raw control byte.)
  (func (export "methodName") (result i32)
    (local $i i32) (local $open i32)
    (if (i32.ne (global.get $methods) (i32.const 1)) (then (return (i32.const -1))))
    ;; `: "` after the name, whitespace around the colon.
    (local.set $i (call $space (global.get $methodEnd) (i32.const 65280)))
    (local.set $i (call $space (i32.add (local.get $i) (i32.const 1)) (i32.const 65280)))
    (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x22)) (then (return (i32.const -1))))
    (local.set $open (local.get $i))
    (loop $next
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (if (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x5c)) (then (return (i32.const -1))))
      (br_if $next (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x22))))
    (i32.or (i32.shl (local.get $open) (i32.const 16)) (local.get $i)))

  ;; Solana's `{"context":{…,"slot":N},"value":…}` envelope, read as head-scan.ts
  ;; largeContextSlotOf reads it: the first `"context"` starting within the first 256 bytes,
  ;; then the first `}` after it and the first `"slot"` before that, then `: N` between them
  ;; (head-scan.ts numberAt: up to 15 decimal digits, or a "0x…" string of at most 14
  ;; significant hex digits). Answers N, or -1 when any of that is missing.
  (func (export "contextSlot") (param $n i32) (result f64)
    (local $i i32) (local $limit i32) (local $at i32) (local $slot i32) (local $close i32)
    (local $stops i32) (local $v v128) (local $bit i32)
    ;; `"context"` is nine bytes, all within the text.
    (local.set $limit (i32.sub (local.get $n) (i32.const 8)))
    (if (i32.gt_s (local.get $limit) (i32.const 256)) (then (local.set $limit (i32.const 256))))
    (local.set $at (i32.const -1))
    (block $searched
      (loop $search
        (br_if $searched (i32.ge_s (local.get $i) (local.get $limit)))
        ;; A quote, then `context"` as one little-endian 64-bit word.
        (if (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x22))
          (then
            (if (i64.eq (i64.load offset=1 (local.get $i)) (i64.const 0x22747865746e6f63))
              (then
                (local.set $at (local.get $i))
                (br $searched)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $search)))
    (if (i32.lt_s (local.get $at) (i32.const 0)) (then (return (f64.const -1))))
    ;; To the first `}`, sixteen bytes a step, noting the first `"slot"` on the way. Bytes past
    ;; $n are left over from earlier texts: a stop there is no stop.
    (local.set $slot (i32.const -1))
    (local.set $close (i32.const -1))
    (local.set $i (i32.add (local.get $at) (i32.const 9)))
    (block $walked
      (loop $walk
        (br_if $walked (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $v (v128.load (local.get $i)))
        (local.set $stops
          (i8x16.bitmask
            (v128.or
              (i8x16.eq (local.get $v) (v128.const i8x16 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d))
              (i8x16.eq (local.get $v) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22)))))
        (block $block
          (loop $stop
            (br_if $block (i32.eqz (local.get $stops)))
            (local.set $bit (i32.add (local.get $i) (i32.ctz (local.get $stops))))
            (br_if $walked (i32.ge_u (local.get $bit) (local.get $n)))
            (if (i32.eq (i32.load8_u (local.get $bit)) (i32.const 0x7d))
              (then
                (local.set $close (local.get $bit))
                (br $walked)))
            ;; `"slot"`: a quote, `slot` as one word, a quote, all within the text.
            (if (i32.lt_s (local.get $slot) (i32.const 0))
              (then
                (if (i32.le_u (i32.add (local.get $bit) (i32.const 6)) (local.get $n))
                  (then
                    (if (i32.and (i32.eq (i32.load offset=1 (local.get $bit)) (i32.const 0x746f6c73))
                                 (i32.eq (i32.load8_u offset=5 (local.get $bit)) (i32.const 0x22)))
                      (then (local.set $slot (local.get $bit))))))))
            ;; The lowest stop done with.
            (local.set $stops (i32.and (local.get $stops) (i32.sub (local.get $stops) (i32.const 1))))
            (br $stop)))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $walk)))
    (if (i32.or (i32.lt_s (local.get $close) (i32.const 0)) (i32.lt_s (local.get $slot) (i32.const 0)))
      (then (return (f64.const -1))))
    ;; `:` after the name (whitespace around it), then the number, all before the `}`.
    (local.set $i (call $space (i32.add (local.get $slot) (i32.const 6)) (local.get $close)))
    (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x3a)) (then (return (f64.const -1))))
    (call $slotNumber
      (call $space (i32.add (local.get $i) (i32.const 1)) (local.get $close))
      (local.get $close)))

  ;; head-scan.ts numberAt at $i (<= $end, where a `}` stands): N, or -1.
  (func $slotNumber (param $i i32) (param $end i32) (result f64)
    (local $k i32) (local $c i32) (local $d i32) (local $value f64) (local $digits i32)
    (local $any i32)
    (if (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x22))
      (then
        ;; "0x…": the quote stands before $end, so the two bytes after it are in the text.
        (if (i32.ne (i32.load8_u offset=1 (local.get $i)) (i32.const 0x30)) (then (return (f64.const -1))))
        (if (i32.ne (i32.or (i32.load8_u offset=2 (local.get $i)) (i32.const 0x20)) (i32.const 0x78))
          (then (return (f64.const -1))))
        (local.set $k (i32.add (local.get $i) (i32.const 3)))
        (block $done
          (loop $hex
            (br_if $done (i32.ge_u (local.get $k) (local.get $end)))
            (local.set $c (i32.load8_u (local.get $k)))
            (if (i32.eq (local.get $c) (i32.const 0x22))
              (then
                (if (i32.or (i32.eqz (local.get $any))
                            (f64.gt (local.get $value) (f64.const 9007199254740991)))
                  (then (return (f64.const -1))))
                (return (local.get $value))))
            (if (i32.lt_u (i32.sub (local.get $c) (i32.const 0x30)) (i32.const 10))
              (then (local.set $d (i32.sub (local.get $c) (i32.const 0x30))))
              (else
                (if (i32.lt_u (i32.sub (i32.or (local.get $c) (i32.const 0x20)) (i32.const 0x61)) (i32.const 6))
                  (then (local.set $d (i32.sub (i32.or (local.get $c) (i32.const 0x20)) (i32.const 0x57))))
                  (else (return (f64.const -1))))))
            (local.set $any (i32.const 1))
            (if (i32.or (local.get $digits) (local.get $d))
              (then
                (local.set $digits (i32.add (local.get $digits) (i32.const 1)))
                (if (i32.gt_u (local.get $digits) (i32.const 14)) (then (return (f64.const -1))))
                (local.set $value
                  (f64.add (f64.mul (local.get $value) (f64.const 16)) (f64.convert_i32_u (local.get $d))))))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $hex)))
        (return (f64.const -1))))
    (local.set $k (local.get $i))
    (block $done
      (loop $decimal
        (br_if $done (i32.ge_u (local.get $k) (local.get $end)))
        (local.set $d (i32.sub (i32.load8_u (local.get $k)) (i32.const 0x30)))
        (br_if $done (i32.ge_u (local.get $d) (i32.const 10)))
        (local.set $value
          (f64.add (f64.mul (local.get $value) (f64.const 10)) (f64.convert_i32_u (local.get $d))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $decimal)))
    (local.set $digits (i32.sub (local.get $k) (local.get $i)))
    (if (i32.or (i32.eqz (local.get $digits)) (i32.gt_u (local.get $digits) (i32.const 15)))
      (then (return (f64.const -1))))
    ;; `.5` or `e3` after the digits: not an integer.
    (if (i32.lt_u (local.get $k) (local.get $end))
      (then
        (local.set $c (i32.load8_u (local.get $k)))
        (if (i32.or (i32.eq (local.get $c) (i32.const 0x2e))
                    (i32.eq (i32.or (local.get $c) (i32.const 0x20)) (i32.const 0x65)))
          (then (return (f64.const -1))))))
    (local.get $value)))
