#include "textflag.h"

// func Line(p unsafe.Pointer)
TEXT ·Line(SB), NOSPLIT|NOFRAME, $0-8
	MOVD p+0(FP), R0
	PRFM (R0), PLDL1KEEP
	RET

// func lines(p unsafe.Pointer, n uintptr)
TEXT ·lines(SB), NOSPLIT|NOFRAME, $0-16
	MOVD p+0(FP), R0
	MOVD n+8(FP), R1
	ADD R0, R1, R2
	SUB $1, R2 // the last byte
loop:
	PRFM (R0), PLDL1KEEP
	ADD $64, R0
	CMP R2, R0
	BLS loop
	PRFM (R2), PLDL1KEEP
	RET
