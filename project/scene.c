/*
 * scene — what a scene name may be (scene.h).
 */
#include <ctype.h>
#include <stddef.h>

#include "project/scene.h"

int
project_scene_ok(const char *s)
{
	size_t	i;

	if (s == NULL || !isalnum((unsigned char)s[0]))
		return 0;
	for (i = 0; s[i]; i++)
		if (i >= PROJECT_SCENE_MAX || !(isalnum((unsigned char)s[i]) ||
		    s[i] == '.' || s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}
