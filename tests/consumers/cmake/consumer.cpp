// SPDX-License-Identifier: MIT
// consumer.cpp - a C++ engine built with CMake against an installed mcc
// (find_package(mcc), target mcc::mcc): it loads the installed aimd module
// through the loader in enforce mode and checks its name, mode and ABI major.
// argv[1]: a scratch ini file to write.
#include <cstdio>
#include <cstring>

#include <mcc_loader.h>

// mcc::mcc must carry MCC_ENABLE_ADAPTIVE_CC exactly as mcc.pc does.
#if defined(MCC_ENABLE_ADAPTIVE_CC) != (EXPECT_ADAPTIVE_CC != 0)
#error "mcc::mcc and the configured --enable-adaptive-cc disagree"
#endif

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	std::FILE *f = std::fopen(argv[1], "w");
	if (!f)
		return 2;
	std::fprintf(f, "[policy]\nmode = enforce\nmodule = aimd\nmodule_dir = %s\n", MCC_MODULE_DIR);
	std::fclose(f);

	mcc_loader_opts o;
	std::memset(&o, 0, sizeof(o));
	o.struct_size = sizeof(o);
	o.engine = "cmake-consumer";
	o.ini_path = argv[1];
	o.ignore_env = 1;
	mcc_instance *inst = nullptr;
	int rc = mcc_instance_acquire(&o, &inst);
	if (rc != 0 || std::strcmp(mcc_instance_name(inst), "aimd") != 0 ||
	    mcc_instance_mode(inst) != MCC_MODE_ENFORCE ||
	    MCC_ABI_MAJOR(mcc_instance_ops(inst)->abi_version) != 1) {
		std::fprintf(stderr, "FAIL: acquire %d, module '%s', mode %d: %s\n", rc,
		             mcc_instance_name(inst), static_cast<int>(mcc_instance_mode(inst)),
		             mcc_instance_error(inst));
		return 1;
	}
	std::printf("ok: C++/CMake consumer loaded '%s' (mode enforce) from %s\n",
	            mcc_instance_name(inst), MCC_MODULE_DIR);
	mcc_instance_release(inst);
	return 0;
}
