package diskcache

import "runtime"

func runtimeGosched() { runtime.Gosched() }
