/*
 * oclgrind 21.10's third false positive: clEnqueueWriteBuffer at a non-zero
 * offset marks bytes [0, size) of the buffer initialised instead of
 * [offset, offset + size). Here the host writes 4 doubles at element 8 of a
 * 16-element buffer and a kernel reads exactly those: each read is reported
 * ("Uninitialized value written to global memory") although the values are
 * right. Written at offset 0 (argument "zero"), nothing is reported. The
 * engine's plastic batches therefore move each slot's fields together and
 * send them in one transfer from offset 0 (host/src/engine/plastic.c,
 * slot_compact). Prints the four values read, 2 3 4 5.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>

static const char *src = "__kernel void k(__global const double *a, ulong first, __global double *b) {\n"
                         "  size_t i = get_global_id(0);\n"
                         "  b[i] = a[first + i];\n"
                         "}\n";

int main(int argc, char **argv)
{
  const cl_ulong first = argc > 1 && strcmp(argv[1], "zero") == 0 ? 0 : 8;
  cl_platform_id p;
  cl_device_id d;
  cl_int e;
  if (clGetPlatformIDs(1, &p, NULL) != CL_SUCCESS || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL) != CL_SUCCESS)
    return 77;
  cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
  cl_command_queue q = clCreateCommandQueue(c, d, 0, &e);
  double in[4] = {2, 3, 4, 5}, out[4];
  cl_mem a = clCreateBuffer(c, CL_MEM_READ_ONLY, 16 * sizeof(double), NULL, &e);
  cl_mem b = clCreateBuffer(c, CL_MEM_WRITE_ONLY, sizeof out, NULL, &e);
  clEnqueueWriteBuffer(q, a, CL_TRUE, first * sizeof(double), sizeof in, in, 0, NULL, NULL);
  cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e);
  clBuildProgram(pr, 1, &d, "", NULL, NULL);
  cl_kernel k = clCreateKernel(pr, "k", &e);
  clSetKernelArg(k, 0, sizeof a, &a);
  clSetKernelArg(k, 1, sizeof first, &first);
  clSetKernelArg(k, 2, sizeof b, &b);
  size_t g = 4;
  clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL);
  e = clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  printf("%g %g %g %g\n", out[0], out[1], out[2], out[3]);
  return e == CL_SUCCESS ? 0 : 1;
}
