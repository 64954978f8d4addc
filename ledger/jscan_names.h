/*
 * jscan_names — the names the scanner's files and its callers share: the
 * members the fold reads (enum jfield) and the block classifiers (enum
 * jscan_isa).  See jscan.h.
 *
 * A header of their own, below jscan.h, so that jscan_prim.h (the
 * byte-level pieces of the scanner's files: field_of names an enum
 * jfield) can use them without including jscan.h: the primitives stay
 * below every file of the scanner.
 */
#ifndef LEDGER_JSCAN_NAMES_H
#define LEDGER_JSCAN_NAMES_H

/* Top-level member names the fold looks at; everything else is validated
 * and passed over. */
enum jfield {
	F_TYPE, F_AT, F_PHASE, F_CTX, F_BUILD, F_AUTOMATED, F_FOOTPRINT,
	F_FRAMEMS, F_CLASSIFICATION, F_MINTED, F_WORST, F_JUMP, F_TRACK,
	F_KIND, F_UNITS, F_FRAME, F_RENDER, F_MEMORY, F_NOTE, F_SITES, F_SCRIPT,
	F_REGIME, F_WINDOW, F_NFIELDS
};

/* The block classifiers jscan_object can use; AUTO picks the best this
 * CPU has.  For tests and benchmarks. */
enum jscan_isa {
	JSCAN_ISA_AUTO = 0, JSCAN_ISA_SCALAR, JSCAN_ISA_SSE2, JSCAN_ISA_AVX2,
	JSCAN_ISA_AVX512
};

#endif
