/* SPDX-License-Identifier: MIT */
/*
 * A null NVTX tool: attaches to NVTX as gputool does (InitializeInjectionNvtx2,
 * the CORE module's push and pop) with empty handlers. Against no tool it
 * measures what NVTX's own indirection costs; against gputool, what
 * gputool's work in a push and a pop costs.
 *
 *   NVTX_INJECTION64_PATH=/path/libgtnvtxnull.so ./app
 */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

static int NVTX_API push(const char *m)
{
	(void)m;
	return 0;
}

static int NVTX_API pop(void)
{
	return 0;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);
int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
	NvtxFunctionTable t = 0;
	unsigned n = 0;

	if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) || n <= NVTX_CBID_CORE_RangePop)
		return 0;
	*t[NVTX_CBID_CORE_RangePushA] = (NvtxFunctionPointer)(nvtxRangePushA_impl_fntype){ push };
	*t[NVTX_CBID_CORE_RangePop] = (NvtxFunctionPointer)(nvtxRangePop_impl_fntype){ pop };
	return 1;
}
