/*
 * scene — what a scene name may be: the one rule the bench files
 * (bench.c: <scene>-<stamp>.json) and the goldens' writer (append.c:
 * goldens.jsonl) both check.
 *
 * It is a module of its own, below both, so that append.c, which bench.c
 * calls to append its history, need not include bench.h back for it (an
 * include circle, issue 21).  Pure: no I/O.
 */
#ifndef PROJECT_SCENE_H
#define PROJECT_SCENE_H

#define PROJECT_SCENE_MAX	64

/* A scene name: [A-Za-z0-9][A-Za-z0-9._-]{0,63}.  1 or 0. */
int	project_scene_ok(const char *scene);

#endif
