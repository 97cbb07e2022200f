/* Version of libnestcl and its tools. */
#ifndef NESTCL_VERSION_H
#define NESTCL_VERSION_H
#ifdef __cplusplus
extern "C" {
#endif
const char *nestcl_version(void);
#ifdef __cplusplus
}
#endif
#endif
