/*
 * The error channel every nestcl function reports through: messages are
 * per thread (one VP's failure must not overwrite another's), may quote the
 * previous message, and are cut visibly when over-long.
 */
#include <pthread.h>
#include <string.h>

#include "check.h"

static void *other_thread(void *arg)
{
  (void)arg;
  CHECK(strcmp(nestcl_last_error(), "") == 0); /* a new thread starts clean */
  CHECK(nestcl_set_error(NESTCL_ECL, "thread %d", 2) == NESTCL_ECL);
  CHECK(strcmp(nestcl_last_error(), "thread 2") == 0);
  return NULL;
}

int main(void)
{
  CHECK(nestcl_set_error(NESTCL_ENOMEM, "main %s %d", "thread", 1) == NESTCL_ENOMEM);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, other_thread, NULL) == 0);
  CHECK(pthread_join(t, NULL) == 0);
  CHECK(strcmp(nestcl_last_error(), "main thread 1") == 0);

  /* Adding context to the previous message must not read a half-overwritten buffer. */
  nestcl_set_error(NESTCL_EIO, "open failed");
  nestcl_set_error(NESTCL_EIO, "cache: %s", nestcl_last_error());
  CHECK(strcmp(nestcl_last_error(), "cache: open failed") == 0);

  static char big[200000];
  memset(big, 'x', sizeof big - 1);
  nestcl_set_error(NESTCL_EBUILD, "%s", big);
  const char *m = nestcl_last_error();
  CHECK(strlen(m) > 1000 && strstr(m, "[message truncated]") != NULL);

  CHECK(strcmp(nestcl_cl_error_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES") == 0);
  CHECK(strcmp(nestcl_cl_error_name(CL_BUILD_PROGRAM_FAILURE), "CL_BUILD_PROGRAM_FAILURE") == 0);
  CHECK(strcmp(nestcl_cl_error_name(-9999), "CL_UNKNOWN_ERROR") == 0);
  printf("error channel ok\n");
  return 0;
}
