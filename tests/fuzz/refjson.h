/*
 * refjson — a deliberately plain JSON validator, the oracle the jscan
 * fuzzer compares against.  Written for obviousness, not speed: one
 * recursive-descent function per RFC 8259 rule, the UTF-8 rules of
 * RFC 3629 spelled out by code point.  It must accept exactly what
 * ledger/jscan.h promises to accept: one JSON object with optional
 * whitespace around it, strict UTF-8 (no overlong forms, no surrogates,
 * nothing past U+10FFFF), \u escapes whose surrogates pair, numbers that
 * strtod makes finite (1e999999 is refused), and at most
 * JSCAN_MAX_DEPTH - 1 nested containers (the top object counts as one).
 */
#ifndef TESTS_FUZZ_REFJSON_H
#define TESTS_FUZZ_REFJSON_H

#include <stddef.h>
#include <stdint.h>

/* 1 if data[0..n) is one valid JSON object by the rules above, else 0. */
int	refjson_object(const char *data, size_t n);

/* The HTTP harnesses' plain decimal reader: one or more digits, nothing
 * else, that fit in 64 bits.  0 with *v, or -1. */
int	ref_number(const char *s, uint64_t *v);

#endif
