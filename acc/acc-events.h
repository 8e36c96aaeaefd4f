/* SPDX-License-Identifier: MIT */
#ifndef GT_ACC_EVENTS_H
#define GT_ACC_EVENTS_H

/*
 * The OpenACC profiling events the tool registers, written once:
 * X(event, handler) registers acc__<handler> for acc_ev_<event>.
 */
#define GT_ACC_EVENTS(X)                            \
	X(device_init_start, device_init)           \
	X(device_init_end, device_init)             \
	X(enter_data_start, construct)              \
	X(enter_data_end, construct)                \
	X(exit_data_start, construct)               \
	X(exit_data_end, construct)                 \
	X(update_start, construct)                  \
	X(update_end, construct)                    \
	X(compute_construct_start, construct)       \
	X(compute_construct_end, construct)         \
	X(wait_start, construct)                    \
	X(wait_end, construct)                      \
	X(enqueue_launch_start, launch)             \
	X(enqueue_launch_end, launch)               \
	X(enqueue_upload_start, transfer)           \
	X(enqueue_upload_end, transfer)             \
	X(enqueue_download_start, transfer)         \
	X(enqueue_download_end, transfer)           \
	X(create, data)                             \
	X(delete, data)                             \
	X(alloc, data)                              \
	X(free, data)

#endif
