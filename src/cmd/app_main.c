/* app_main.c — the main of a hosted application (http/app.h): the
 * application defines `skiff_app`, this file the program around it.  Kept
 * out of libskiff-host.a (skiff's own main would clash); examples/ and
 * out-of-tree applications link it (mk/examples.mk, docs/app.md). */
#include "../http/app.h"

int main(int argc, char **argv);

int main(int argc, char **argv)
{
	return skiff_app_main(&skiff_app, argc, argv);
}
