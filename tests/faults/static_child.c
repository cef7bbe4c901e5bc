/* Linked statically: LD_PRELOAD cannot reach it, so profsh records nothing of it. The driver
   checks that it still runs as it would without profsh. */
#include <stdio.h>

int main(void) {
  printf("static child ran\n");
  return 5;
}
