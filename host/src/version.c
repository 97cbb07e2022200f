/* The library's version string, shared by every nestcl CLI's --version. */
#include "nestcl/version.h"

const char *nestcl_version(void)
{
  return NESTCL_VERSION_STRING;
}
