/* SPDX-License-Identifier: MIT */
/* mcc_tool.h - the subcommands of mcc(1) that live in files of their own. */
#ifndef MCC_TOOL_H
#define MCC_TOOL_H

/* `mcc stat [--prometheus] [PID | FILE | DIR]` (mcc_stat.c); argv: the
 * arguments after "stat". Returns the exit status. */
int mcc_cmd_stat(int argc, char **argv);

#endif
