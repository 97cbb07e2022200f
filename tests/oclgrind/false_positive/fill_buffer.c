/*
 * oclgrind 21.10's second false positive: memory cleared with
 * clEnqueueFillBuffer stays "uninitialised" to the simulator, so a kernel
 * that adds into it is reported ("Uninitialized value written to global
 * memory") although the sum is right. The same buffer created from zeros
 * (CL_MEM_COPY_HOST_PTR) is not reported; nestcl_block_create clears its ring
 * so (host/src/block.c). Prints the four sums, 1 each. Argument "copy": the
 * CL_MEM_COPY_HOST_PTR variant.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>

static const char *src = "__kernel void k(__global long *a) { a[get_global_id(0)] += 1; }\n";

int main(int argc, char **argv)
{
  const int copy = argc > 1 && strcmp(argv[1], "copy") == 0;
  cl_platform_id p;
  cl_device_id d;
  cl_int e;
  if (clGetPlatformIDs(1, &p, NULL) != CL_SUCCESS || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL) != CL_SUCCESS)
    return 77;
  cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
  cl_command_queue q = clCreateCommandQueue(c, d, 0, &e);
  cl_long zeros[4] = {0}, out[4];
  cl_mem m =
    clCreateBuffer(c, CL_MEM_READ_WRITE | (copy ? CL_MEM_COPY_HOST_PTR : 0), sizeof zeros, copy ? zeros : NULL, &e);
  if (!copy) {
    const cl_long zero = 0;
    clEnqueueFillBuffer(q, m, &zero, sizeof zero, 0, sizeof zeros, 0, NULL, NULL);
  }
  cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e);
  clBuildProgram(pr, 1, &d, "", NULL, NULL);
  cl_kernel k = clCreateKernel(pr, "k", &e);
  clSetKernelArg(k, 0, sizeof m, &m);
  size_t g = 4;
  clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL);
  e = clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  printf("%ld %ld %ld %ld\n", (long)out[0], (long)out[1], (long)out[2], (long)out[3]);
  return e == CL_SUCCESS ? 0 : 1;
}
