#include <Python.h>
/* selectolax.lexbor.LexborNode's C layout (a Cython extension type with C methods: its vtable
   pointer first), as selectolax 0.3–1.x declare it in lexbor.pxd; verified at import. */
typedef struct {
    PyObject_HEAD
    void *vtab;
    void *node;
    PyObject *parser;
    int is_fragment_root;
    int is_template_content;
} ws_lexbor_node_object;
#define WS_NODE_OBJECT_SIZE sizeof(ws_lexbor_node_object)
