/* The few Lexbor 2.x/3.x structures webshelf reads (lexbor/dom/interfaces/node.h, element.h,
   attr.h, character_data.h; lexbor/core/str.h). Field order as there; checked at import. */
#include <stdint.h>
#include <stddef.h>
typedef struct { unsigned char *data; size_t length; } ws_lexbor_str_t;
typedef struct ws_node ws_node_t;
struct ws_node {
    void *events;
    uintptr_t local_name;
    uintptr_t prefix;
    uintptr_t ns;
    void *owner_document;
    ws_node_t *next;
    ws_node_t *prev;
    ws_node_t *parent;
    ws_node_t *first_child;
    ws_node_t *last_child;
    void *user;
    int type;
};
typedef struct ws_attr ws_attr_t;
typedef struct {
    ws_node_t node;
    uintptr_t upper_name;
    uintptr_t qualified_name;
    ws_lexbor_str_t *is_value;
    ws_attr_t *first_attr;
    ws_attr_t *last_attr;
    ws_attr_t *attr_id;
    ws_attr_t *attr_class;
} ws_element_t;
struct ws_attr {
    ws_node_t node;
    uintptr_t upper_name;
    uintptr_t qualified_name;
    ws_lexbor_str_t *value;
    void *owner;
    ws_attr_t *next;
    ws_attr_t *prev;
};
typedef struct { ws_node_t node; ws_lexbor_str_t data; } ws_chardata_t;
