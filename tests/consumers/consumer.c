/* SPDX-License-Identifier: MIT */
/*
 * consumer.c - a C engine built with only `pkg-config --cflags --libs mcc`
 * against an installed mcc: it loads the installed observe module through
 * the loader in observe mode and checks its name, mode and ABI major.
 * argv[1]: a scratch ini file to write; argv[2]: the installed module dir.
 */
#include <stdio.h>
#include <string.h>

#include <mcc_loader.h>

#if defined(MCC_ENABLE_ADAPTIVE_CC) != (EXPECT_ADAPTIVE_CC != 0)
#error "pkg-config --cflags mcc and the configured --enable-adaptive-cc disagree"
#endif

int main(int argc, char **argv)
{
	mcc_instance *inst = NULL;
	FILE *f;

	if (argc != 3 || !(f = fopen(argv[1], "w")))
		return 2;
	fprintf(f, "[policy]\nmode = observe\nmodule_dir = %s\n", argv[2]);
	fclose(f);
	struct mcc_loader_opts o = {
		.struct_size = sizeof(o),
		.engine = "pkgconfig-consumer",
		.ini_path = argv[1],
		.ignore_env = 1,
	};
	int rc = mcc_instance_acquire(&o, &inst);
	if (rc != 0 || strcmp(mcc_instance_name(inst), "observe") != 0 ||
	    mcc_instance_mode(inst) != MCC_MODE_OBSERVE ||
	    MCC_ABI_MAJOR(mcc_instance_ops(inst)->abi_version) != 1) {
		fprintf(stderr, "FAIL: acquire %d, module '%s', mode %d: %s\n", rc,
		        mcc_instance_name(inst), (int)mcc_instance_mode(inst), mcc_instance_error(inst));
		return 1;
	}
	printf("ok: C/pkg-config consumer loaded '%s' (mode observe) from %s\n",
	       mcc_instance_name(inst), argv[2]);
	mcc_instance_release(inst);
	return 0;
}
