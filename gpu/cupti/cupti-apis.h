/* SPDX-License-Identifier: MIT */
#ifndef GT_GPU_CUPTI_APIS_H
#define GT_GPU_CUPTI_APIS_H

/*
 * The CUDA functions the CUDA backend intercepts, written once. Everything
 * that enumerates them expands this list: the callbacks enabled with CUPTI
 * (gputool and the CUPTI-only baseline of bench/cuda), the class of each
 * callback id, and the parameter reads below, which fail to compile if a
 * parameter structure or field is wrong.
 *
 *   A(domain, name, class)   class from enum gt_cupti_class
 *   K(domain, name, field)   a copy whose direction is the cudaMemcpyKind
 *                            params->field
 *   Z(domain, name, field)   an allocation of params->field bytes
 *
 * domain is RUNTIME or DRIVER; name is the CUPTI callback id without its
 * CUPTI_<domain>_TRACE_CBID_ prefix, and <name>_params is its parameter
 * structure. Only the current entry points are listed: the legacy 32-bit
 * driver functions (cuMemAlloc without _v2, ...) are not.
 */
#define GT_CUPTI_APIS(A, K, Z)                                        \
	/* kernel launches */                                          \
	A(RUNTIME, cudaLaunchKernel_v7000, LAUNCH)                     \
	A(RUNTIME, cudaLaunchKernel_ptsz_v7000, LAUNCH)                \
	A(RUNTIME, cudaLaunchKernelExC_v11060, LAUNCH)                 \
	A(RUNTIME, cudaLaunchKernelExC_ptsz_v11060, LAUNCH)            \
	A(RUNTIME, cudaLaunchCooperativeKernel_v9000, LAUNCH)          \
	A(RUNTIME, cudaLaunchCooperativeKernel_ptsz_v9000, LAUNCH)     \
	A(RUNTIME, __cudaLaunchKernel_v13000, LAUNCH)                  \
	A(RUNTIME, __cudaLaunchKernel_ptsz_v13000, LAUNCH)             \
	A(DRIVER, cuLaunchKernel, LAUNCH)                              \
	A(DRIVER, cuLaunchKernel_ptsz, LAUNCH)                         \
	A(DRIVER, cuLaunchKernelEx, LAUNCH)                            \
	A(DRIVER, cuLaunchKernelEx_ptsz, LAUNCH)                       \
	A(DRIVER, cuLaunchCooperativeKernel, LAUNCH)                   \
	A(DRIVER, cuLaunchCooperativeKernel_ptsz, LAUNCH)              \
	A(DRIVER, cuLaunch, LAUNCH)                                    \
	A(DRIVER, cuLaunchGrid, LAUNCH)                                \
	A(DRIVER, cuLaunchGridAsync, LAUNCH)                           \
	/* graphs: launches, and instantiation (to count their work) */ \
	A(RUNTIME, cudaGraphLaunch_v10000, GRAPH_LAUNCH)               \
	A(RUNTIME, cudaGraphLaunch_ptsz_v10000, GRAPH_LAUNCH)          \
	A(DRIVER, cuGraphLaunch, GRAPH_LAUNCH)                         \
	A(DRIVER, cuGraphLaunch_ptsz, GRAPH_LAUNCH)                    \
	A(RUNTIME, cudaGraphInstantiate_v10000, GRAPH_INSTANTIATE)     \
	A(RUNTIME, cudaGraphInstantiate_v12000, GRAPH_INSTANTIATE)     \
	A(RUNTIME, cudaGraphInstantiateWithFlags_v11040, GRAPH_INSTANTIATE) \
	A(RUNTIME, cudaGraphInstantiateWithParams_v12000, GRAPH_INSTANTIATE) \
	A(RUNTIME, cudaGraphInstantiateWithParams_ptsz_v12000, GRAPH_INSTANTIATE) \
	A(DRIVER, cuGraphInstantiate, GRAPH_INSTANTIATE)               \
	A(DRIVER, cuGraphInstantiate_v2, GRAPH_INSTANTIATE)            \
	A(DRIVER, cuGraphInstantiateWithFlags, GRAPH_INSTANTIATE)      \
	A(DRIVER, cuGraphInstantiateWithParams, GRAPH_INSTANTIATE)     \
	A(DRIVER, cuGraphInstantiateWithParams_ptsz, GRAPH_INSTANTIATE) \
	/* stream capture: what is launched then runs inside a graph */ \
	A(RUNTIME, cudaStreamBeginCapture_v10000, CAPTURE_BEGIN)      \
	A(RUNTIME, cudaStreamBeginCapture_ptsz_v10000, CAPTURE_BEGIN) \
	A(RUNTIME, cudaStreamBeginCaptureToGraph_v12030, CAPTURE_BEGIN) \
	A(RUNTIME, cudaStreamBeginCaptureToGraph_ptsz_v12030, CAPTURE_BEGIN) \
	A(RUNTIME, cudaStreamEndCapture_v10000, CAPTURE_END)          \
	A(RUNTIME, cudaStreamEndCapture_ptsz_v10000, CAPTURE_END)     \
	A(DRIVER, cuStreamBeginCapture, CAPTURE_BEGIN)                 \
	A(DRIVER, cuStreamBeginCapture_ptsz, CAPTURE_BEGIN)            \
	A(DRIVER, cuStreamBeginCapture_v2, CAPTURE_BEGIN)              \
	A(DRIVER, cuStreamBeginCapture_v2_ptsz, CAPTURE_BEGIN)         \
	A(DRIVER, cuStreamBeginCaptureToGraph, CAPTURE_BEGIN)          \
	A(DRIVER, cuStreamBeginCaptureToGraph_ptsz, CAPTURE_BEGIN)     \
	A(DRIVER, cuStreamEndCapture, CAPTURE_END)                     \
	A(DRIVER, cuStreamEndCapture_ptsz, CAPTURE_END)                \
	/* copies, runtime: direction from their cudaMemcpyKind */     \
	K(RUNTIME, cudaMemcpy_v3020, kind)                             \
	K(RUNTIME, cudaMemcpy_ptds_v7000, kind)                        \
	K(RUNTIME, cudaMemcpyAsync_v3020, kind)                        \
	K(RUNTIME, cudaMemcpyAsync_ptsz_v7000, kind)                   \
	K(RUNTIME, cudaMemcpy2D_v3020, kind)                           \
	K(RUNTIME, cudaMemcpy2D_ptds_v7000, kind)                      \
	K(RUNTIME, cudaMemcpy2DAsync_v3020, kind)                      \
	K(RUNTIME, cudaMemcpy2DAsync_ptsz_v7000, kind)                 \
	K(RUNTIME, cudaMemcpy3D_v3020, p->kind)                        \
	K(RUNTIME, cudaMemcpy3D_ptds_v7000, p->kind)                   \
	K(RUNTIME, cudaMemcpy3DAsync_v3020, p->kind)                   \
	K(RUNTIME, cudaMemcpy3DAsync_ptsz_v7000, p->kind)              \
	K(RUNTIME, cudaMemcpyToArray_v3020, kind)                      \
	K(RUNTIME, cudaMemcpyToArray_ptds_v7000, kind)                 \
	K(RUNTIME, cudaMemcpyFromArray_v3020, kind)                    \
	K(RUNTIME, cudaMemcpyFromArray_ptds_v7000, kind)               \
	K(RUNTIME, cudaMemcpy2DToArray_v3020, kind)                    \
	K(RUNTIME, cudaMemcpy2DToArray_ptds_v7000, kind)               \
	K(RUNTIME, cudaMemcpy2DFromArray_v3020, kind)                  \
	K(RUNTIME, cudaMemcpy2DFromArray_ptds_v7000, kind)             \
	K(RUNTIME, cudaMemcpyArrayToArray_v3020, kind)                 \
	K(RUNTIME, cudaMemcpy2DArrayToArray_v3020, kind)               \
	K(RUNTIME, cudaMemcpyToArrayAsync_v3020, kind)                 \
	K(RUNTIME, cudaMemcpyFromArrayAsync_v3020, kind)               \
	K(RUNTIME, cudaMemcpy2DToArrayAsync_v3020, kind)               \
	K(RUNTIME, cudaMemcpy2DFromArrayAsync_v3020, kind)             \
	K(RUNTIME, cudaMemcpyToSymbol_v3020, kind)                     \
	K(RUNTIME, cudaMemcpyToSymbol_ptds_v7000, kind)                \
	K(RUNTIME, cudaMemcpyFromSymbol_v3020, kind)                   \
	K(RUNTIME, cudaMemcpyFromSymbol_ptds_v7000, kind)              \
	K(RUNTIME, cudaMemcpyToSymbolAsync_v3020, kind)                \
	K(RUNTIME, cudaMemcpyToSymbolAsync_ptsz_v7000, kind)           \
	K(RUNTIME, cudaMemcpyFromSymbolAsync_v3020, kind)              \
	K(RUNTIME, cudaMemcpyFromSymbolAsync_ptsz_v7000, kind)         \
	A(RUNTIME, cudaMemcpyPeer_v4000, COPY_D2D)                     \
	A(RUNTIME, cudaMemcpyPeerAsync_v4000, COPY_D2D)                \
	A(RUNTIME, cudaMemcpy3DPeer_v4000, COPY_D2D)                   \
	A(RUNTIME, cudaMemcpy3DPeer_ptds_v7000, COPY_D2D)              \
	A(RUNTIME, cudaMemcpy3DPeerAsync_v4000, COPY_D2D)              \
	A(RUNTIME, cudaMemcpy3DPeerAsync_ptsz_v7000, COPY_D2D)         \
	/* copies, driver */                                           \
	A(DRIVER, cuMemcpyHtoD_v2, COPY_H2D)                           \
	A(DRIVER, cuMemcpyHtoD_v2_ptds, COPY_H2D)                      \
	A(DRIVER, cuMemcpyHtoDAsync_v2, COPY_H2D)                      \
	A(DRIVER, cuMemcpyHtoDAsync_v2_ptsz, COPY_H2D)                 \
	A(DRIVER, cuMemcpyHtoA_v2, COPY_H2D)                           \
	A(DRIVER, cuMemcpyHtoA_v2_ptds, COPY_H2D)                      \
	A(DRIVER, cuMemcpyHtoAAsync_v2, COPY_H2D)                      \
	A(DRIVER, cuMemcpyHtoAAsync_v2_ptsz, COPY_H2D)                 \
	A(DRIVER, cuMemcpyDtoH_v2, COPY_D2H)                           \
	A(DRIVER, cuMemcpyDtoH_v2_ptds, COPY_D2H)                      \
	A(DRIVER, cuMemcpyDtoHAsync_v2, COPY_D2H)                      \
	A(DRIVER, cuMemcpyDtoHAsync_v2_ptsz, COPY_D2H)                 \
	A(DRIVER, cuMemcpyAtoH_v2, COPY_D2H)                           \
	A(DRIVER, cuMemcpyAtoH_v2_ptds, COPY_D2H)                      \
	A(DRIVER, cuMemcpyAtoHAsync_v2, COPY_D2H)                      \
	A(DRIVER, cuMemcpyAtoHAsync_v2_ptsz, COPY_D2H)                 \
	A(DRIVER, cuMemcpyDtoD_v2, COPY_D2D)                           \
	A(DRIVER, cuMemcpyDtoD_v2_ptds, COPY_D2D)                      \
	A(DRIVER, cuMemcpyDtoDAsync_v2, COPY_D2D)                      \
	A(DRIVER, cuMemcpyDtoDAsync_v2_ptsz, COPY_D2D)                 \
	A(DRIVER, cuMemcpyDtoA_v2, COPY_D2D)                           \
	A(DRIVER, cuMemcpyDtoA_v2_ptds, COPY_D2D)                      \
	A(DRIVER, cuMemcpyAtoD_v2, COPY_D2D)                           \
	A(DRIVER, cuMemcpyAtoD_v2_ptds, COPY_D2D)                      \
	A(DRIVER, cuMemcpyAtoA_v2, COPY_D2D)                           \
	A(DRIVER, cuMemcpyAtoA_v2_ptds, COPY_D2D)                      \
	A(DRIVER, cuMemcpyPeer, COPY_D2D)                              \
	A(DRIVER, cuMemcpyPeer_ptds, COPY_D2D)                         \
	A(DRIVER, cuMemcpyPeerAsync, COPY_D2D)                         \
	A(DRIVER, cuMemcpyPeerAsync_ptsz, COPY_D2D)                    \
	A(DRIVER, cuMemcpy3DPeer, COPY_D2D)                            \
	A(DRIVER, cuMemcpy3DPeer_ptds, COPY_D2D)                       \
	A(DRIVER, cuMemcpy3DPeerAsync, COPY_D2D)                       \
	A(DRIVER, cuMemcpy3DPeerAsync_ptsz, COPY_D2D)                  \
	A(DRIVER, cuMemcpy, COPY)                                      \
	A(DRIVER, cuMemcpy_ptds, COPY)                                 \
	A(DRIVER, cuMemcpyAsync, COPY)                                 \
	A(DRIVER, cuMemcpyAsync_ptsz, COPY)                            \
	A(DRIVER, cuMemcpy2D_v2, COPY)                                 \
	A(DRIVER, cuMemcpy2D_v2_ptds, COPY)                            \
	A(DRIVER, cuMemcpy2DUnaligned_v2, COPY)                        \
	A(DRIVER, cuMemcpy2DUnaligned_v2_ptds, COPY)                   \
	A(DRIVER, cuMemcpy2DAsync_v2, COPY)                            \
	A(DRIVER, cuMemcpy2DAsync_v2_ptsz, COPY)                       \
	A(DRIVER, cuMemcpy3D_v2, COPY)                                 \
	A(DRIVER, cuMemcpy3D_v2_ptds, COPY)                            \
	A(DRIVER, cuMemcpy3DAsync_v2, COPY)                            \
	A(DRIVER, cuMemcpy3DAsync_v2_ptsz, COPY)                       \
	/* memsets */                                                  \
	A(RUNTIME, cudaMemset_v3020, MEMSET)                           \
	A(RUNTIME, cudaMemset_ptds_v7000, MEMSET)                      \
	A(RUNTIME, cudaMemsetAsync_v3020, MEMSET)                      \
	A(RUNTIME, cudaMemsetAsync_ptsz_v7000, MEMSET)                 \
	A(RUNTIME, cudaMemset2D_v3020, MEMSET)                         \
	A(RUNTIME, cudaMemset2D_ptds_v7000, MEMSET)                    \
	A(RUNTIME, cudaMemset2DAsync_v3020, MEMSET)                    \
	A(RUNTIME, cudaMemset2DAsync_ptsz_v7000, MEMSET)               \
	A(RUNTIME, cudaMemset3D_v3020, MEMSET)                         \
	A(RUNTIME, cudaMemset3D_ptds_v7000, MEMSET)                    \
	A(RUNTIME, cudaMemset3DAsync_v3020, MEMSET)                    \
	A(RUNTIME, cudaMemset3DAsync_ptsz_v7000, MEMSET)               \
	A(DRIVER, cuMemsetD8_v2, MEMSET)                               \
	A(DRIVER, cuMemsetD8_v2_ptds, MEMSET)                          \
	A(DRIVER, cuMemsetD16_v2, MEMSET)                              \
	A(DRIVER, cuMemsetD16_v2_ptds, MEMSET)                         \
	A(DRIVER, cuMemsetD32_v2, MEMSET)                              \
	A(DRIVER, cuMemsetD32_v2_ptds, MEMSET)                         \
	A(DRIVER, cuMemsetD2D8_v2, MEMSET)                             \
	A(DRIVER, cuMemsetD2D8_v2_ptds, MEMSET)                        \
	A(DRIVER, cuMemsetD2D16_v2, MEMSET)                            \
	A(DRIVER, cuMemsetD2D16_v2_ptds, MEMSET)                       \
	A(DRIVER, cuMemsetD2D32_v2, MEMSET)                            \
	A(DRIVER, cuMemsetD2D32_v2_ptds, MEMSET)                       \
	A(DRIVER, cuMemsetD8Async, MEMSET)                             \
	A(DRIVER, cuMemsetD8Async_ptsz, MEMSET)                        \
	A(DRIVER, cuMemsetD16Async, MEMSET)                            \
	A(DRIVER, cuMemsetD16Async_ptsz, MEMSET)                       \
	A(DRIVER, cuMemsetD32Async, MEMSET)                            \
	A(DRIVER, cuMemsetD32Async_ptsz, MEMSET)                       \
	A(DRIVER, cuMemsetD2D8Async, MEMSET)                           \
	A(DRIVER, cuMemsetD2D8Async_ptsz, MEMSET)                      \
	A(DRIVER, cuMemsetD2D16Async, MEMSET)                          \
	A(DRIVER, cuMemsetD2D16Async_ptsz, MEMSET)                     \
	A(DRIVER, cuMemsetD2D32Async, MEMSET)                          \
	A(DRIVER, cuMemsetD2D32Async_ptsz, MEMSET)                     \
	/* allocations and releases */                                 \
	Z(RUNTIME, cudaMalloc_v3020, size)                             \
	Z(RUNTIME, cudaMallocHost_v3020, size)                         \
	Z(RUNTIME, cudaHostAlloc_v3020, size)                          \
	Z(RUNTIME, cudaMallocManaged_v6000, size)                      \
	Z(RUNTIME, cudaMallocAsync_v11020, size)                       \
	Z(RUNTIME, cudaMallocAsync_ptsz_v11020, size)                  \
	Z(RUNTIME, cudaMallocFromPoolAsync_v11020, size)               \
	Z(RUNTIME, cudaMallocFromPoolAsync_ptsz_v11020, size)          \
	A(RUNTIME, cudaMallocPitch_v3020, ALLOC)                       \
	A(RUNTIME, cudaMallocArray_v3020, ALLOC)                       \
	A(RUNTIME, cudaMalloc3D_v3020, ALLOC)                          \
	A(RUNTIME, cudaMalloc3DArray_v3020, ALLOC)                     \
	A(RUNTIME, cudaMallocMipmappedArray_v5000, ALLOC)              \
	Z(DRIVER, cuMemAlloc_v2, bytesize)                             \
	Z(DRIVER, cuMemAllocHost_v2, bytesize)                         \
	Z(DRIVER, cuMemHostAlloc, bytesize)                            \
	Z(DRIVER, cuMemAllocManaged, bytesize)                         \
	Z(DRIVER, cuMemAllocAsync, bytesize)                           \
	Z(DRIVER, cuMemAllocAsync_ptsz, bytesize)                      \
	Z(DRIVER, cuMemAllocFromPoolAsync, bytesize)                   \
	Z(DRIVER, cuMemAllocFromPoolAsync_ptsz, bytesize)              \
	Z(DRIVER, cuMemCreate, size)                                   \
	A(DRIVER, cuMemAllocPitch_v2, ALLOC)                           \
	A(RUNTIME, cudaFree_v3020, FREE)                               \
	A(RUNTIME, cudaFreeHost_v3020, FREE)                           \
	A(RUNTIME, cudaFreeArray_v3020, FREE)                          \
	A(RUNTIME, cudaFreeMipmappedArray_v5000, FREE)                 \
	A(RUNTIME, cudaFreeAsync_v11020, FREE)                         \
	A(RUNTIME, cudaFreeAsync_ptsz_v11020, FREE)                    \
	A(DRIVER, cuMemFree_v2, FREE)                                  \
	A(DRIVER, cuMemFreeHost, FREE)                                 \
	A(DRIVER, cuMemFreeAsync, FREE)                                \
	A(DRIVER, cuMemFreeAsync_ptsz, FREE)                           \
	A(DRIVER, cuMemRelease, FREE)                                  \
	/* synchronization */                                          \
	A(RUNTIME, cudaDeviceSynchronize_v3020, SYNC)                  \
	A(RUNTIME, cudaThreadSynchronize_v3020, SYNC)                  \
	A(RUNTIME, cudaStreamSynchronize_v3020, SYNC)                  \
	A(RUNTIME, cudaStreamSynchronize_ptsz_v7000, SYNC)             \
	A(RUNTIME, cudaEventSynchronize_v3020, SYNC)                   \
	A(RUNTIME, cudaStreamWaitEvent_v3020, SYNC)                    \
	A(RUNTIME, cudaStreamWaitEvent_ptsz_v7000, SYNC)               \
	A(DRIVER, cuCtxSynchronize, SYNC)                              \
	A(DRIVER, cuCtxSynchronize_v2, SYNC)                           \
	A(DRIVER, cuStreamSynchronize, SYNC)                           \
	A(DRIVER, cuStreamSynchronize_ptsz, SYNC)                      \
	A(DRIVER, cuEventSynchronize, SYNC)                            \
	A(DRIVER, cuStreamWaitEvent, SYNC)                             \
	A(DRIVER, cuStreamWaitEvent_ptsz, SYNC)

/*
 * Every intercepted function as GT_CUPTI_EN(domain, cbid), for those that
 * enable them (the backend, bench/cuda's CUPTI-only subscriber): define
 * GT_CUPTI_EN, then write GT_CUPTI_CALLBACKS.
 */
#define GT_CUPTI_CB_RUNTIME(name) GT_CUPTI_EN(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##name)
#define GT_CUPTI_CB_DRIVER(name) GT_CUPTI_EN(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##name)
#define GT_CUPTI_CB_ANY(dom, name, x) GT_CUPTI_CB_##dom(name)
#define GT_CUPTI_CALLBACKS GT_CUPTI_APIS(GT_CUPTI_CB_ANY, GT_CUPTI_CB_ANY, GT_CUPTI_CB_ANY)

/*
 * The activity kinds the backend enables. Allocations and synchronizations
 * are measured at their API call instead (see docs/CUDA.md): every call then
 * gets exactly one result, which the monitor's map relies on.
 */
#define GT_CUPTI_ACTIVITY_KINDS(X)  \
	X(CONCURRENT_KERNEL)        \
	X(MEMCPY)                   \
	X(MEMCPY2)                  \
	X(MEMSET)

#endif
