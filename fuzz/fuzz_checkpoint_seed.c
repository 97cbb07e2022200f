/* Writes the seed of fuzz_checkpoint: ckpt_net.h's network checkpointed after 30 ms (usage: DIR). */
#include <stdio.h>

#include "ckpt_net.h"

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: fuzz_checkpoint_seed DIR\n");
    return 2;
  }
  nestcl_engine *e = NULL;
  int rc = ckpt_net(&e);
  if (!rc)
    rc = nestcl_engine_simulate(e, 30.0);
  if (!rc)
    rc = nestcl_engine_checkpoint(e, argv[1]);
  if (rc)
    fprintf(stderr, "error: %s\n", nestcl_last_error());
  nestcl_engine_destroy(e);
  return rc ? 1 : 0;
}
