/* test_lif: the engine tests' hand-written model (see test_lif_body.h). */
#ifndef NESTCL_TEST_LIF_H
#define NESTCL_TEST_LIF_H
#include "nestcl/model.h"
extern const char test_lif_kernel_source[]; /* test_lif_body.h + test_lif_kernel.cl, embedded */
extern const nestcl_model test_lif_model;
extern const nestcl_model *const test_lif_models[1];
#endif
