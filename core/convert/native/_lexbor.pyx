# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The served path's reads of the parsed tree in C, each the same answer as the Python code it
stands in for (``core/convert/native/__init__.py`` lists them and checks each before use).

Why: a median page spent much of its time asking selectolax about single nodes (a wrapper, an
attribute dict, a decoded string per text node); here the tree is read through Lexbor's own
structures (``lexbor_layout.h``) and a wrapper is made only for a node handed back
(``ws_node_object.h``). Where C cannot give the same answer (text that is not UTF-8, a name
that is not ASCII, a character beyond the BMP) it asks the Python code."""

from libc.stdlib cimport calloc, free, malloc, realloc
from libc.stdint cimport uint64_t
from libc.string cimport memchr, memcmp, memcpy, memset
from libc.math cimport log1p
from cpython.unicode cimport Py_UNICODE_ISSPACE, PyUnicode_DecodeUTF8

from webshelf.core.convert.blocks import features as _features, tree as _tree

cdef extern from "lexbor_layout.h":
    ctypedef struct ws_lexbor_str_t:
        unsigned char *data
        size_t length
    ctypedef struct ws_node_t:
        size_t local_name
        size_t prefix
        ws_node_t *next
        ws_node_t *parent
        ws_node_t *first_child
        int type
    ctypedef struct ws_attr_t:
        ws_node_t node
        ws_lexbor_str_t *value
        ws_attr_t *next
    ctypedef struct ws_element_t:
        ws_node_t node
        ws_attr_t *first_attr
    ctypedef struct ws_chardata_t:
        ws_node_t node
        ws_lexbor_str_t data

cdef extern from "ws_node_object.h":
    # selectolax's node wrapper, to make one for a node found here (``layout_ok`` first)
    ctypedef class selectolax.lexbor.LexborNode [object ws_lexbor_node_object, check_size ignore]:
        cdef void *vtab
        cdef void *node
        cdef object parser
    size_t WS_NODE_OBJECT_SIZE

cdef enum:
    TAG_TEXT = 2
    NODE_TEXT = 3
    NODE_ELEMENT = 1
    ATTR_CLASS = 0x0b
    ATTR_ID = 0x21

Block = _features.Block
_punct = _features._punct
_FLAGS = _tree._FLAGS
_flags = _tree.flags
_TAG_VECTORS = _features._TAG_VECTORS
_NO_TAG = _features._NO_TAG
cdef object _TAG_NAMES = None  # tag id -> name, the block tags (BLOCK_IDS)
cdef size_t A_ID = _tree._A_ID
cdef size_t IMG_ID = _tree._IMG_ID
cdef unsigned char CLS[128]  # bit 0 punct, 1 ends, 2 commas, 3 digits, of each ASCII byte
cdef size_t T_LI, T_TABLE, T_TR, T_QUOTE, T_PRE, T_H1, T_H2, T_CODE
cdef unsigned char FURN[4096]
cdef unsigned char BLOCK[4096]
# each BMP character's four classes (the bits of CLS), 0xFF until asked: ``features._wide_counts``,
# which matches the character against the same four patterns, fills it in
cdef unsigned char WIDE[0x10000]
memset(WIDE, 0xFF, sizeof(WIDE))


cdef unsigned char _wide_class(Py_UCS4 cp) except 0xFE:
    punct, ends, commas, digits = _features._wide_counts(chr(cp))
    cdef unsigned char cls = (1 if punct else 0) | (2 if ends else 0) | (4 if commas else 0) | (8 if digits else 0)
    WIDE[cp] = cls
    return cls


def _setup():
    global _TAG_NAMES, T_LI, T_TABLE, T_TR, T_QUOTE, T_PRE, T_H1, T_H2, T_CODE
    _TAG_NAMES = dict(_tree.BLOCK_IDS)
    ids = {name: tag_id for tag_id, name in _tree.BLOCK_IDS.items()}
    T_LI, T_TABLE, T_TR, T_QUOTE, T_PRE, T_H1, T_H2 = (
        ids["li"], ids["table"], ids["tr"], ids["blockquote"], ids["pre"], ids["h1"], ids["h2"])
    (T_CODE,) = _tree.tag_ids(frozenset({"code"}))
    for tag_id in _tree.BLOCK_IDS:
        if tag_id >= 4096:
            raise RuntimeError("block tag id out of range")
        BLOCK[tag_id] = 1
    for name in _tree._FURNITURE:
        FURN[ids[name]] = 1
    for bit, chars in enumerate(_features._ASCII_CLASSES):
        for c in chars:
            CLS[c] |= 1 << bit


_setup()


def layout_ok(LexborNode node):
    """True when selectolax's wrappers are laid out as ``ws_node_object.h`` says: the size, and
    the node and parser fields read (only read) where the wrapper's own properties find them."""
    if type(node).__basicsize__ != WS_NODE_OBJECT_SIZE:
        return False
    return (<size_t> node.node) == node.mem_id and node.parser is type(node).parser.__get__(node)


cdef inline LexborNode _wrap(ws_node_t *ptr, object parser):
    """A new selectolax wrapper of ``ptr`` (``LexborNode.new``: selectolax makes one per lookup)."""
    cdef LexborNode out = LexborNode.__new__(LexborNode)
    out.node = <void *> ptr
    out.parser = parser
    return out


cdef inline ws_node_t *_next(ws_node_t *node, ws_node_t *top) noexcept:
    """The node after ``node`` in document order within ``top``'s subtree, NULL at its end."""
    if node.first_child != NULL:
        return node.first_child
    while node != top and node.next == NULL:
        node = node.parent
    if node == top:
        return NULL
    return node.next


cdef inline Py_ssize_t _decode_at(const unsigned char *s, Py_ssize_t i, Py_ssize_t n, Py_UCS4 *cp) noexcept:
    cdef unsigned char c = s[i]
    if c < 0x80:
        cp[0] = c
        return 1
    if c < 0xC2:
        return 0
    if c < 0xE0:
        if i + 1 >= n or (s[i + 1] & 0xC0) != 0x80:
            return 0
        cp[0] = ((c & 0x1F) << 6) | (s[i + 1] & 0x3F)
        return 2
    if c < 0xF0:
        if i + 2 >= n or (s[i + 1] & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80:
            return 0
        cp[0] = ((c & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F)
        if cp[0] < 0x800 or (0xD800 <= cp[0] <= 0xDFFF):
            return 0
        return 3
    if c < 0xF5:
        if (i + 3 >= n or (s[i + 1] & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80
                or (s[i + 3] & 0xC0) != 0x80):
            return 0
        cp[0] = ((c & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F)
        if cp[0] < 0x10000 or cp[0] > 0x10FFFF:
            return 0
        return 4
    return 0


cdef struct Stats:
    Py_ssize_t chars      # len(text(True, " ", True))
    Py_ssize_t parts
    Py_ssize_t words      # len(text.split())
    Py_ssize_t counts[4]  # class counts (valid when ascii: no character beyond the BMP)
    bint ascii
    bint bad              # not UTF-8: measure in Python


cdef Py_ssize_t _strip(const unsigned char *s, Py_ssize_t n, Py_ssize_t *end) noexcept:
    """Where ``s.decode().strip()`` starts in ``s`` (its end into ``end``), -1 when the white
    space at either end is not UTF-8."""
    cdef Py_ssize_t i = 0, j = n, k, b
    cdef Py_UCS4 cp
    while i < n:
        k = _decode_at(s, i, n, &cp)
        if k == 0:
            return -1
        if not Py_UNICODE_ISSPACE(cp):
            break
        i += k
    while j > i:
        b = j - 1
        while b > i and (s[b] & 0xC0) == 0x80 and j - b < 4:
            b -= 1
        if _decode_at(s, b, j, &cp) != j - b:
            return -1
        if not Py_UNICODE_ISSPACE(cp):
            break
        j = b
    end[0] = j
    return i


cdef int _add_text(Stats *st, const unsigned char *s, Py_ssize_t n) except -1:
    """One text node's stripped fragment into ``st``."""
    cdef Py_ssize_t i, j, k
    cdef Py_UCS4 cp
    cdef unsigned char c, cls
    cdef bint in_word = False
    st.parts += 1
    i = _strip(s, n, &j)
    if i < 0:
        st.bad = True
        return 0
    while i < j:
        c = s[i]
        if c < 0x80:
            i += 1
            cls = CLS[c]
            cp = c
        else:
            k = _decode_at(s, i, j, &cp)
            if k == 0:
                st.bad = True
                return 0
            i += k
            if cp < 0x10000:
                cls = WIDE[cp]
                if cls == 0xFF:
                    cls = _wide_class(cp)
            else:  # (beyond the table: the Python code counts this block)
                st.ascii = False
                cls = 0
        if cls:
            if cls & 1: st.counts[0] += 1
            if cls & 2: st.counts[1] += 1
            if cls & 4: st.counts[2] += 1
            if cls & 8: st.counts[3] += 1
        st.chars += 1
        if Py_UNICODE_ISSPACE(cp):
            in_word = False
        elif not in_word:
            in_word = True
            st.words += 1
    return 0


cdef int _stats(ws_node_t *root, Stats *st) except -1:
    """``root``'s text as ``text(True, " ", True)`` gives it, measured into ``st``."""
    cdef ws_node_t *node = root if root.local_name == TAG_TEXT else root.first_child
    cdef ws_chardata_t *text
    st.chars = st.parts = st.words = 0
    st.counts[0] = st.counts[1] = st.counts[2] = st.counts[3] = 0
    st.ascii = True
    st.bad = False
    while node != NULL:
        if node.local_name == TAG_TEXT:
            text = <ws_chardata_t *> node
            if text.data.data != NULL:
                _add_text(st, text.data.data, text.data.length)
                if st.bad:
                    return 0
        node = _next(node, root)
    if st.parts:
        st.chars += st.parts - 1
    return 0


def text_len(LexborNode node):
    """``len(node.text(deep=True, separator=" ", strip=True))``."""
    return _text_len(<ws_node_t *> node.node, node, None)


cdef Py_ssize_t _stripped_len(const unsigned char *s, Py_ssize_t n) noexcept:
    """len(s.decode().strip()), -1 when ``s`` is not UTF-8."""
    cdef Py_ssize_t i, j, k, count = 0
    cdef Py_UCS4 cp
    cdef uint64_t word
    i = _strip(s, n, &j)
    if i < 0:
        return -1
    while i < j:  # the code points between: ASCII eight bytes at a time
        if j - i >= 8:
            memcpy(&word, s + i, 8)
            if (word & 0x8080808080808080u) == 0:
                i += 8
                count += 8
                continue
        if s[i] < 0x80:
            i += 1
        else:
            k = _decode_at(s, i, j, &cp)
            if k == 0:
                return -1
            i += k
        count += 1
    return count


cdef Py_ssize_t _text_len(ws_node_t *root, object wrapper, object parser) except -1:
    """``text_len`` of ``root``; text that is not UTF-8 is measured by selectolax (through
    ``wrapper``, or a new one for ``parser``'s tree)."""
    # (``text()`` of a text node is its own data; of an element, its descendants')
    cdef ws_node_t *node = root if root.local_name == TAG_TEXT else root.first_child
    cdef ws_chardata_t *text
    cdef Py_ssize_t total = 0, parts = 0, part
    while node != NULL:
        if node.local_name == TAG_TEXT:
            text = <ws_chardata_t *> node
            if text.data.data != NULL:
                part = _stripped_len(text.data.data, text.data.length)
                if part < 0:
                    return _selectolax_len(root, wrapper, parser)
                total += part
                parts += 1
        node = _next(node, root)
    return total + parts - 1 if parts else 0


cdef Py_ssize_t _selectolax_len(ws_node_t *root, object wrapper, object parser) except -1:
    if wrapper is None:
        wrapper = _wrap(root, parser)
    return len(wrapper.text(True, " ", True))


cdef inline ws_attr_t *_attr(ws_node_t *node, size_t name) noexcept:
    cdef ws_attr_t *attr
    if node.type != NODE_ELEMENT:
        return NULL
    attr = (<ws_element_t *> node).first_attr
    while attr != NULL:
        if attr.node.local_name == name and attr.node.prefix == 0:
            return attr
        attr = attr.next
    return NULL


cdef inline object _value(ws_attr_t *attr):
    if attr == NULL or attr.value == NULL or attr.value.data == NULL:
        return None
    return PyUnicode_DecodeUTF8(<char *> attr.value.data, attr.value.length, "replace")


cdef bint _same_class(ws_attr_t *a, ws_attr_t *b) except -1:
    """Both have a non-empty class value, byte for byte equal."""
    if a == NULL or b == NULL or a.value == NULL or b.value == NULL:
        return False
    if a.value.data == NULL or b.value.data == NULL or a.value.length == 0:
        return False
    if a.value.length == b.value.length and memcmp(a.value.data, b.value.data, a.value.length) == 0:
        return True
    if _ascii(a.value) and _ascii(b.value):
        return False
    return _value(a) == _value(b)  # (Lexbor keeps undecodable bytes: they all read as U+FFFD)


cdef inline bint _ascii(ws_lexbor_str_t *s) noexcept:
    cdef size_t i
    for i in range(s.length):
        if s.data[i] >= 0x80:
            return False
    return True


cdef struct Info:
    int done
    int depth
    int pos, neg, li, table, quote, furniture, pre
    int repeated


def blocks(LexborNode container, Py_ssize_t limit=3000):
    """``features.blocks(container, limit)``, the same list."""
    cdef ws_node_t *top = <ws_node_t *> container.node
    parser = container.parser
    cdef ws_node_t *node
    cdef Py_ssize_t n_all = 0, k, p, i, depth
    # pass 1: count the non-text nodes (what traverse(include_text=False) yields)
    node = top
    while node != NULL:
        if node.type != NODE_TEXT:
            n_all += 1
        node = _next(node, top)
    cdef ws_node_t **ptr = <ws_node_t **> malloc(n_all * sizeof(ws_node_t *))
    cdef Py_ssize_t *parent = <Py_ssize_t *> malloc(n_all * sizeof(Py_ssize_t))
    cdef Py_ssize_t *stack = <Py_ssize_t *> malloc((n_all + 1) * sizeof(Py_ssize_t))
    cdef char *inner = <char *> malloc(n_all)
    cdef Py_ssize_t *owner = <Py_ssize_t *> malloc(n_all * sizeof(Py_ssize_t))  # found index, -1 none, -2 unknown
    cdef Info *info = <Info *> malloc(n_all * sizeof(Info))
    cdef ws_attr_t **cls_attr = <ws_attr_t **> malloc(n_all * sizeof(ws_attr_t *))
    cdef Py_ssize_t sp = 0
    cdef Stats st
    cdef size_t tag_id
    cdef Py_ssize_t *link_chars = NULL
    cdef Py_ssize_t *links = NULL
    cdef char *has_img = NULL
    cdef Py_ssize_t *chars_of = NULL
    cdef double *dens = NULL
    cdef double *logc = NULL
    cdef Py_ssize_t *mass_sum = NULL
    cdef double *link_sum = NULL
    cdef Py_ssize_t chars, words, block_links, block_link_chars, before, total, same, container_chars
    cdef Py_ssize_t container_links, size, heading, q, longest, last, n
    cdef double density, log_size, per_word, same_share, log_same
    try:
        # pass 2: index, parents
        k = 0
        node = top
        stack[0] = -1
        while True:
            if node.type != NODE_TEXT:
                ptr[k] = node
                parent[k] = stack[sp]
                inner[k] = 0
                owner[k] = -2
                info[k].done = 0
                cls_attr[k] = _attr(node, ATTR_CLASS)
                if node.first_child != NULL:
                    sp += 1
                    stack[sp] = k
                k += 1
            if node.first_child != NULL:
                node = node.first_child
                continue
            while node != top and node.next == NULL:
                node = node.parent
                sp -= 1
            if node == top:
                break
            node = node.next
        # candidates (block tags below the top) mark their ancestors below the top as inner
        for k in range(1, n_all):
            if ptr[k].local_name < 4096 and BLOCK[ptr[k].local_name]:
                p = parent[k]
                while p > 0 and not inner[p]:
                    inner[p] = 1
                    p = parent[p]
        info[0].done = 1
        info[0].depth = 0
        info[0].pos = info[0].neg = info[0].li = info[0].table = info[0].quote = 0
        info[0].furniture = info[0].pre = info[0].repeated = 0
        names = [None] * n_all
        sames = {}  # (walk index, tag id, class) -> ``_same``
        counts_of = {}  # walk index -> ``_children``
        chains = [None] * n_all
        chains[0] = ()
        found_k = []
        found_text = []
        found_chars = []
        found_words = []
        found_counts = []
        for k in range(1, n_all):
            tag_id = ptr[k].local_name
            if not (tag_id < 4096 and BLOCK[tag_id]):
                continue
            if len(found_k) >= limit:
                break
            if inner[k] and tag_id != T_PRE:
                continue
            p = parent[k]
            _info(p, ptr, parent, info, cls_attr, names, chains, sames)
            if info[p].pre:
                continue
            _stats(ptr[k], &st)
            if st.bad:
                text = _wrap(ptr[k], parser).text(True, " ", True)
                if not text:
                    continue
                found_text.append(text)
                found_chars.append(len(text))
                found_words.append(len(text.split()) or 1)
                found_counts.append(None)
            else:
                if st.chars == 0:
                    continue
                found_text.append(None)
                found_chars.append(st.chars)
                found_words.append(st.words or 1)
                found_counts.append((st.counts[0], st.counts[1], st.counts[2], st.counts[3]) if st.ascii else None)
            found_k.append(k)
        n = len(found_k)
        if not n:
            return []
        for i in range(n):
            owner[found_k[i]] = i
        owner[0] = -1
        link_chars = <Py_ssize_t *> calloc(n, sizeof(Py_ssize_t))
        links = <Py_ssize_t *> calloc(n, sizeof(Py_ssize_t))
        has_img = <char *> calloc(n, 1)
        chars_of = <Py_ssize_t *> malloc(n * sizeof(Py_ssize_t))
        dens = <double *> malloc(n * sizeof(double))
        logc = <double *> malloc(n * sizeof(double))
        mass_sum = <Py_ssize_t *> calloc(n_all, sizeof(Py_ssize_t))
        link_sum = <double *> calloc(n_all, sizeof(double))
        if (link_chars == NULL or links == NULL or has_img == NULL or chars_of == NULL or dens == NULL
                or logc == NULL or mass_sum == NULL or link_sum == NULL):
            raise MemoryError()
        container_links = 0
        for k in range(n_all):
            tag_id = ptr[k].local_name
            if tag_id != A_ID and tag_id != IMG_ID:
                continue
            i = _owner(k, parent, owner)
            if tag_id == A_ID:
                size = _text_len(ptr[k], None, parser)
                container_links += size
                if i >= 0:
                    link_chars[i] += size
                    links[i] += 1
            elif i >= 0:
                has_img[i] = 1
        total = 0
        for i in range(n):
            chars_of[i] = found_chars[i]
            total += chars_of[i]
        if total == 0:
            total = 1
        container_chars = _text_len(top, container, parser) or 1
        tail = (log1p(container_chars), min(1.0, container_links / <double> container_chars), log1p(n))
        heading = n
        for i in range(n):
            tag_id = ptr[found_k[i]].local_name
            if tag_id == T_H1 or tag_id == T_H2:
                heading = i
                break
        before = 0
        heads = []
        ancestry = {}
        for i in range(n):
            k = found_k[i]
            tag_id = ptr[k].local_name
            chars = chars_of[i]
            words = found_words[i]
            counts = found_counts[i]
            if counts is None:
                text = found_text[i]
                if text is None:
                    text = _wrap(ptr[k], parser).text(True, " ", True)
                punct, ends, commas, digits = _punct(text)
            else:
                punct, ends, commas, digits = counts
            cls, _, positive, negative = _name(k, ptr, cls_attr, names)
            p = parent[k]
            if cls:
                same = _same(p, tag_id, cls, cls_attr[k], ptr, sames)
                same_share = same / <double> max(1, _children(p, ptr, counts_of))
                log_same = log1p(same)
            else:
                same_share = log_same = 0.0
            if tag_id == T_PRE:
                block_links = block_link_chars = 0
            else:
                block_links, block_link_chars = links[i], link_chars[i]
            density = block_link_chars / <double> chars
            if density > 1.0:
                density = 1.0
            log_size = log1p(chars)
            above = ancestry.get(p)
            if above is None:
                depth = info[p].depth + 1
                above = ancestry[p] = (
                    float(depth if depth < 40 else 40), float(info[p].pos), float(info[p].neg),
                    float(info[p].li), float(info[p].table), float(info[p].quote),
                    float(info[p].furniture), log1p(info[p].repeated))
            per_word = chars / <double> words
            heads.append([
                log_size, log1p(words), density, log1p(block_links),
                punct / <double> chars, 100.0 * ends / chars, 100.0 * commas / chars, digits / <double> chars,
                per_word if per_word < 30.0 else 30.0, above[0], i / <double> n, before / <double> total,
                chars / <double> total, *_TAG_VECTORS.get(_TAG_NAMES[tag_id], _NO_TAG),
                float(positive), float(negative), above[1], above[2], above[3], above[4], above[5],
                above[6], 1.0 if has_img[i] else 0.0, same_share, log_same, above[7],
                1.0 if i < heading else 0.0,
            ])
            before += chars
            dens[i] = density
            logc[i] = log_size
        # where each block sits relative to the text mass (``features._branch_features``, the same
        # sums in the same order): the three levels below the top of each block's branch
        for i in range(n):
            q = parent[found_k[i]]
            while q > 0:
                if info[q].depth <= 3:
                    mass_sum[q] += chars_of[i]
                    link_sum[q] += dens[i] * chars_of[i]
                q = parent[q]
        longest = 0
        for i in range(1, n):
            if chars_of[i] > chars_of[longest]:
                longest = i
        out = []
        last = n - 1
        for i in range(n):
            features = heads[i]
            features += (
                dens[i - 1] if i else -1.0, dens[i + 1] if i < last else -1.0,
                logc[i - 1] if i else 0.0, logc[i + 1] if i < last else 0.0, *tail,
                *_branch(parent[found_k[i]], parent[found_k[longest]], info, parent, mass_sum, link_sum,
                         chars_of[i], dens[i], total))
            chain = chains[parent[found_k[i]]]
            out.append(Block(_wrap(ptr[found_k[i]], parser), chars_of[i], features, chain))
        return out
    finally:
        free(ptr); free(parent); free(stack); free(inner); free(owner); free(info); free(cls_attr)
        free(link_chars); free(links); free(has_img); free(chars_of); free(dens); free(logc)
        free(mass_sum); free(link_sum)


cdef Py_ssize_t _same(Py_ssize_t p, size_t tag_id, object cls, ws_attr_t *attr, ws_node_t **ptr,
                     dict memo) except -1:
    """How many children of walk node ``p`` have tag ``tag_id`` and the class ``cls`` (``attr``'s
    value, not empty): counted once per parent, tag and class (a run of a thousand cards is read
    once, not once per card) — ``Tree.groups`` and ``Tree._siblings``."""
    key = (p, tag_id, cls)
    same = memo.get(key)
    if same is None:
        same = memo[key] = _same_count(ptr[p], tag_id, attr)
    return same


cdef Py_ssize_t _same_count(ws_node_t *parent, size_t tag_id, ws_attr_t *cls) except -1:
    cdef ws_node_t *child = parent.first_child
    cdef Py_ssize_t count = 0
    while child != NULL:
        if child.local_name == tag_id and child.type == NODE_ELEMENT and _same_class(_attr(child, ATTR_CLASS), cls):
            count += 1
        child = child.next
    return count


cdef Py_ssize_t _children(Py_ssize_t p, ws_node_t **ptr, dict memo) except -1:
    """Non-text children of walk node ``p`` (``iter(include_text=False)``), counted once."""
    cdef ws_node_t *child
    cdef Py_ssize_t count = 0
    found = memo.get(p)
    if found is None:
        child = ptr[p].first_child
        while child != NULL:
            if child.type != NODE_TEXT:
                count += 1
            child = child.next
        found = memo[p] = count
    return found


cdef int _info(Py_ssize_t p, ws_node_t **ptr, Py_ssize_t *parent, Info *info, ws_attr_t **cls_attr,
               list names, list chains, dict sames) except -1:
    """``Tree.info`` of walk node p: the facts of its path below the top, p included."""
    cdef Py_ssize_t q = p, r, same
    cdef size_t tag_id
    cdef Info *base
    cdef Info *me
    if info[p].done:
        return 0
    path = []
    while not info[q].done:
        path.append(q)
        q = parent[q]
    for r in reversed(path):
        base = &info[parent[r]]
        me = &info[r]
        cls, _, positive, negative = _name(r, ptr, cls_attr, names)
        tag_id = ptr[r].local_name
        same = _same(parent[r], tag_id, cls, cls_attr[r], ptr, sames) if cls else 0
        me.depth = base.depth + 1
        me.pos = base.pos or positive
        me.neg = base.neg or negative
        me.li = base.li or tag_id == T_LI
        me.table = base.table or tag_id == T_TABLE or tag_id == T_TR
        me.quote = base.quote or tag_id == T_QUOTE
        me.furniture = base.furniture or (tag_id < 4096 and FURN[tag_id])
        me.pre = base.pre or tag_id == T_PRE
        me.repeated = base.repeated if base.repeated >= same else same
        me.done = 1
        chains[r] = chains[parent[r]] + (<size_t> ptr[r],)
    return 0


cdef tuple _name(Py_ssize_t k, ws_node_t **ptr, ws_attr_t **cls_attr, list names):
    """``tree.read_name`` of walk node k, once: its rule written out here, because calling the
    Python function for every block and ancestor was an eighth of this module's ``blocks``."""
    named = names[k]
    if named is not None:
        return named
    cls = _value(cls_attr[k])
    ident = _value(_attr(ptr[k], ATTR_ID))
    if cls:
        positive, negative = _FLAGS.get(cls) or _flags(cls)
        if ident:
            more = _FLAGS.get(ident) or _flags(ident)
            named = (cls, ident, positive or more[0], negative or more[1])
        else:
            named = (cls, ident, positive, negative)
    elif ident:
        positive, negative = _FLAGS.get(ident) or _flags(ident)
        named = (cls, ident, positive, negative)
    else:
        named = (cls, ident, False, False)
    names[k] = named
    return named


cdef Py_ssize_t _owner(Py_ssize_t k, Py_ssize_t *parent, Py_ssize_t *owner) noexcept:
    """The found block holding walk node k (its nearest ancestor-or-self among them), -1 none."""
    cdef Py_ssize_t q = k, found
    while owner[q] == -2:
        q = parent[q]
    found = owner[q]
    q = k
    while owner[q] == -2:
        owner[q] = found
        q = parent[q]
    return found


cdef struct Words:  # lower-case ASCII words, NUL-separated in ``data``
    char data[4096]
    Py_ssize_t at[256]
    Py_ssize_t length[256]
    Py_ssize_t count  # -1: not set


cdef Words _CHROME_WORDS  # the class/id words ``named``'s ``match`` acts on (``named_words``)
cdef Words _STEP_NAMES  # the tag names whose marks do not count (``mark_steps``)
_CHROME_WORDS.count = -1
_STEP_NAMES.count = -1


cdef int _set_words(Words *words, names) except -1:
    data = [name.encode("ascii") for name in sorted(names)]
    if len(data) > 256 or sum(len(w) + 1 for w in data) > 4096 or not all(w == w.lower() for w in data):
        raise ValueError("at most 256 short lower-case ASCII words")
    at = 0
    for i, word in enumerate(data):
        words.at[i], words.length[i] = at, len(word)
        for k, c in enumerate(word):
            words.data[at + k] = c
        at += len(word) + 1
    words.count = len(data)
    return 0


cdef bint _has_word(Words *words, const unsigned char *text, Py_ssize_t length) noexcept:
    """Whether ``text`` (ASCII, any case) is one of ``words``."""
    cdef Py_ssize_t w, k
    cdef unsigned char c
    for w in range(words.count):
        if words.length[w] != length:
            continue
        for k in range(length):
            c = text[k]
            if b'A' <= c <= b'Z':
                c += 32
            if c != <unsigned char> words.data[words.at[w] + k]:
                break
        else:
            return True
    return False


def named_words(words):
    """Tell ``named`` every word its ``match`` can act on (a part of a class/id name, lower case
    ASCII): a name without one of them as a part is not handed to ``match`` at all."""
    _set_words(&_CHROME_WORDS, words)


cdef bint _may_match(ws_attr_t *attr) noexcept:
    """Whether the name in ``attr`` could hold one of the ``named_words`` as a part: its parts
    are the runs between white space, "-", "_" and ":" (how ``_match`` splits them), compared
    in lower case. A name that is not ASCII is always handed on (Unicode lower-casing is the
    Python code's to do)."""
    cdef ws_lexbor_str_t *value
    cdef Py_ssize_t i = 0, start, n, length
    cdef unsigned char c
    if attr == NULL or attr.value == NULL or attr.value.data == NULL:
        return False
    value = attr.value
    n = <Py_ssize_t> value.length
    while i <= n:
        start = i
        while i < n:
            c = value.data[i]
            if c >= 0x80:
                return True
            if Py_UNICODE_ISSPACE(c) or c == b'-' or c == b'_' or c == b':':
                break
            i += 1
        length = i - start
        if length and _has_word(&_CHROME_WORDS, value.data + start, length):
            return True
        i += 1
    return False


def named(LexborNode root, match):
    """``html_main_content._named(root, match)``: (node, kind, token) for each element of
    ``root``'s subtree (``root`` too) with a class or id attribute that ``match`` — called with
    the class list, or the class list, a space and the id — gives a kind, unless the element is
    a ``<pre>``/``<code>`` or inside one, in document order."""
    cdef ws_node_t *top = <ws_node_t *> root.node
    cdef ws_node_t *node = top
    cdef ws_node_t *up
    cdef ws_attr_t *cls_attr
    cdef ws_attr_t *id_attr
    parser = root.parser
    out = []
    while node != NULL:
        if node.type == NODE_ELEMENT:
            cls_attr = _attr(node, ATTR_CLASS)
            id_attr = _attr(node, ATTR_ID)
            if (cls_attr != NULL or id_attr != NULL) and (_CHROME_WORDS.count < 0 or _may_match(cls_attr)
                                                          or _may_match(id_attr)):
                cls = _value(cls_attr)
                ident = _value(id_attr)
                kind, token = match((cls or "") if ident is None else f"{cls or ''} {ident}")
                if kind is not None:
                    up = node
                    while up != NULL and up.local_name != T_PRE and up.local_name != T_CODE:
                        up = up.parent
                    if up == NULL:
                        out.append((_wrap(node, parser), kind, token))
        node = _next(node, top)
    return out


cdef enum:
    NODE_COMMENT = 8


def comments(LexborNode root):
    """``[n for n in root.traverse() if n.is_comment_node]``: the comment nodes of ``root``'s
    subtree in document order, without a wrapper for every element on the way."""
    cdef ws_node_t *top = <ws_node_t *> root.node
    cdef ws_node_t *node = top
    parser = root.parser
    out = []
    while node != NULL:
        if node.type == NODE_COMMENT:
            out.append(_wrap(node, parser))
        node = _next(node, top)
    return out


cdef tuple _branch(Py_ssize_t p, Py_ssize_t mass_p, Info *info, Py_ssize_t *parent, Py_ssize_t *mass_sum,
                   double *link_sum, Py_ssize_t chars, double density, Py_ssize_t total):
    """``features._branch_features``' eight values of a block whose parent is walk node ``p``
    (``mass_p``: the longest block's parent): its branch's shares and link densities 1, 2 and 3
    levels below the top, and where it sits against the longest block's branch."""
    cdef Py_ssize_t length = info[p].depth, lca, d, q
    cdef Py_ssize_t level[3]
    cdef Py_ssize_t a = p, b = mass_p
    # the deepest common ancestor below the top of p and mass_p: walk both up to one depth, then together
    while info[a].depth > info[b].depth:
        a = parent[a]
    while info[b].depth > info[a].depth:
        b = parent[b]
    while a != b:
        a = parent[a]
        b = parent[b]
    lca = info[a].depth - 1  # (-1: only the top in common)
    level[0] = level[1] = level[2] = -1
    q = p
    while q > 0:
        if info[q].depth <= 3:
            level[info[q].depth - 1] = q
        q = parent[q]
    in_mass = 1.0 if length and lca >= 0 else 0.0
    where = (float(min(40, length - 1 - lca)), float(lca + 1), in_mass)
    shares, ratios = [], []
    for d in range(3):
        if d < length:
            q = level[d]
            shares.append(mass_sum[q] / <double> total)
            if d < 2:
                ratios.append(link_sum[q] / mass_sum[q] if mass_sum[q] else 0.0)
        else:
            shares.append(chars / <double> total)
            if d < 2:
                ratios.append(density)
    return (*shares, *ratios, *where)


def junk(LexborNode root, frozenset tags):
    """The elements of ``root``'s subtree (``root`` too) whose tag is one of ``tags`` (tag ids),
    in document order: what a selector list of those type selectors finds."""
    cdef ws_node_t *top = <ws_node_t *> root.node
    cdef ws_node_t *node = top
    cdef unsigned char wanted[4096]
    memset(wanted, 0, sizeof(wanted))
    for tag_id in tags:
        if not 0 <= tag_id < 4096:
            raise ValueError(f"tag id {tag_id} is not one of HTML's")
        wanted[<size_t> tag_id] = 1
    parser = root.parser
    out = []
    while node != NULL:
        if node.type == NODE_ELEMENT and node.local_name < 4096 and wanted[node.local_name]:
            out.append(_wrap(node, parser))
        node = _next(node, top)
    return out


# -- the pre-check's tag marks (``html_precheck._mark_bound``) ---------------------------------

cdef inline bint _name_char(unsigned char c) noexcept:
    return (b'a' <= c <= b'z') or (b'A' <= c <= b'Z') or (b'0' <= c <= b'9') or c == b':' or c == b'-'


cdef inline bint _first_char(unsigned char c) noexcept:
    return (b'a' <= c <= b'z') or (b'A' <= c <= b'Z') or c == b'/'


def mark_bound(const unsigned char[::1] data, Py_ssize_t chunks):
    """(how many tag marks — matches of ``<[/A-Za-z][A-Za-z0-9:-]*`` — ``data`` has, the bound of
    their running balance from ``chunks`` consecutive runs of equal size, the stray end tags):
    ``html_precheck``'s count, ``_balance_bound`` and ``_stray`` of ``re.findall``'s list, with
    the marks hashed in place and no Python object made (``mark_steps`` says which names count)."""
    cdef Py_ssize_t n = data.shape[0], i = 0, j, count = 0, size, at, run, slot, cap, e
    cdef const unsigned char *s = &data[0] if n else NULL
    cdef const unsigned char *hit
    cdef Py_ssize_t *mark_at = NULL
    cdef Py_ssize_t *mark_len = NULL
    cdef size_t *mark_hash = NULL
    cdef Py_ssize_t *key_at = NULL
    cdef Py_ssize_t *key_len = NULL
    cdef Py_ssize_t *counts = NULL
    cdef size_t h
    cdef Py_ssize_t bound, level, opens, closes, step, stray, ends
    if _STEP_NAMES.count < 0:
        raise RuntimeError("mark_bound needs mark_steps first")
    cdef Py_ssize_t room = 1024
    cdef void *grown
    try:
        mark_at = <Py_ssize_t *> malloc(room * sizeof(Py_ssize_t))
        mark_len = <Py_ssize_t *> malloc(room * sizeof(Py_ssize_t))
        mark_hash = <size_t *> malloc(room * sizeof(size_t))
        if mark_at == NULL or mark_len == NULL or mark_hash == NULL:
            raise MemoryError()
        i = 0
        while i < n - 1:  # the marks, as ``findall`` finds them (each scan goes on after a match)
            hit = <const unsigned char *> memchr(s + i, b'<', n - 1 - i)
            if hit == NULL:
                break
            i = hit - s
            if _first_char(s[i + 1]):
                j = i + 2
                while j < n and _name_char(s[j]):
                    j += 1
                h = _fnv(s + i, j - i, FNV_OFFSET)
                if count == room:  # (grown by doubling: a page's marks are not known in advance)
                    room *= 2
                    grown = realloc(mark_at, room * sizeof(Py_ssize_t))
                    if grown == NULL:
                        raise MemoryError()
                    mark_at = <Py_ssize_t *> grown
                    grown = realloc(mark_len, room * sizeof(Py_ssize_t))
                    if grown == NULL:
                        raise MemoryError()
                    mark_len = <Py_ssize_t *> grown
                    grown = realloc(mark_hash, room * sizeof(size_t))
                    if grown == NULL:
                        raise MemoryError()
                    mark_hash = <size_t *> grown
                mark_at[count] = i
                mark_len[count] = j - i
                mark_hash[count] = h
                count += 1
                i = j
            else:
                i += 1
        if count == 0:
            return 0, 0, 0
        size = (count + chunks - 1) // chunks  # (ceiling divisions: C's ``//`` truncates here)
        runs = (count + size - 1) // size
        cap = 64
        while cap < 2 * count:
            cap *= 2
        key_at = <Py_ssize_t *> malloc(cap * sizeof(Py_ssize_t))
        key_len = <Py_ssize_t *> malloc(cap * sizeof(Py_ssize_t))
        counts = <Py_ssize_t *> calloc(cap * runs, sizeof(Py_ssize_t))
        if key_at == NULL or key_len == NULL or counts == NULL:
            raise MemoryError()
        for slot in range(cap):
            key_len[slot] = -1
        for at in range(count):
            i, e = mark_at[at], mark_len[at]
            slot = <Py_ssize_t> (mark_hash[at] & (cap - 1))
            while key_len[slot] >= 0 and not (key_len[slot] == e and memcmp(s + key_at[slot], s + i, e) == 0):
                slot = (slot + 1) & (cap - 1)
            if key_len[slot] < 0:
                key_at[slot] = i
                key_len[slot] = e
            counts[slot * runs + at // size] += 1
        # the balance's bound: per run, at most the level it starts at plus its counted opens
        bound = level = 0
        for run in range(runs):
            opens = closes = 0
            for slot in range(cap):
                if key_len[slot] < 0 or not counts[slot * runs + run]:
                    continue
                step = _mark_step(s + key_at[slot], key_len[slot])
                if step > 0:
                    opens += counts[slot * runs + run]
                elif step < 0:
                    closes += counts[slot * runs + run]
            if level + opens > bound:
                bound = level + opens
            level += opens - closes
        # stray end tags: an end mark's count beyond its open mark's ("</p" against "<p", as written)
        stray = 0
        for slot in range(cap):
            e = key_len[slot]
            if e < 3 or s[key_at[slot] + 1] != b'/' or not _alpha(s[key_at[slot] + 2]):
                continue
            ends = 0
            for run in range(runs):
                ends += counts[slot * runs + run]
            opens = _total(s, key_at, key_len, counts, cap, runs, s + key_at[slot] + 2, e - 2)
            if ends > opens:
                stray += ends - opens
        return count, bound, stray
    finally:
        free(mark_at); free(mark_len); free(mark_hash); free(key_at); free(key_len); free(counts)


cdef inline bint _alpha(unsigned char c) noexcept:
    return (b'a' <= c <= b'z') or (b'A' <= c <= b'Z')


cdef size_t FNV_OFFSET = 14695981039346656037u


cdef inline size_t _fnv(const unsigned char *p, Py_ssize_t length, size_t h) noexcept:
    """FNV-1a of ``p[:length]``, going on from ``h`` (``FNV_OFFSET`` to start)."""
    cdef Py_ssize_t k
    for k in range(length):
        h = (h ^ p[k]) * 1099511628211u
    return h


cdef Py_ssize_t _total(const unsigned char *s, Py_ssize_t *key_at, Py_ssize_t *key_len, Py_ssize_t *counts,
                       Py_ssize_t cap, Py_ssize_t runs, const unsigned char *name, Py_ssize_t length) noexcept:
    """The count, over all runs, of the mark "<" + ``name``."""
    cdef size_t h = _fnv(name, length, _fnv(<const unsigned char *> b"<", 1, FNV_OFFSET))
    cdef Py_ssize_t slot = <Py_ssize_t> (h & (cap - 1)), run, total = 0
    while key_len[slot] >= 0:
        if (key_len[slot] == length + 1 and s[key_at[slot]] == b'<'
                and memcmp(s + key_at[slot] + 1, name, length) == 0):
            for run in range(runs):
                total += counts[slot * runs + run]
            return total
        slot = (slot + 1) & (cap - 1)
    return 0


def mark_steps(names):
    """Tell ``mark_bound`` the tag names (lower case) whose marks do not count: ``html_precheck``'s
    ``VOID`` and ``OPTIONAL_END``."""
    _set_words(&_STEP_NAMES, names)


cdef Py_ssize_t _mark_step(const unsigned char *mark, Py_ssize_t length) noexcept:
    """``_Steps``: +1 for an open mark, -1 for an end mark, 0 for one without a name that starts
    with a letter or whose name (lower-cased) is one of ``mark_steps``'."""
    cdef bint close = mark[1] == b'/'
    cdef const unsigned char *name = mark + (2 if close else 1)
    cdef Py_ssize_t size = length - (2 if close else 1)
    if size <= 0 or not _alpha(name[0]) or _has_word(&_STEP_NAMES, name, size):
        return 0
    return -1 if close else 1


def link_len(LexborNode root):
    """``sum(text_len(a) for a in root.css("a"))``: the text of every anchor in ``root``'s
    subtree (``root`` too, an anchor inside another counted again), by tag id as the type
    selector matches."""
    cdef ws_node_t *top = <ws_node_t *> root.node
    cdef ws_node_t *node = top
    cdef Py_ssize_t total = 0
    parser = root.parser
    while node != NULL:
        if node.local_name == A_ID and node.type == NODE_ELEMENT:
            total += _text_len(node, None, parser)
        node = _next(node, top)
    return total


def class_text(LexborNode root):
    """The non-empty class values of ``root``'s subtree (``root`` too) joined by spaces, in
    document order: what ``" ".join(filter(None, (n.attrs["class"] for n in root.css("[class]"))))``
    gives, without a wrapper and a string per element."""
    cdef ws_node_t *top = <ws_node_t *> root.node
    cdef ws_node_t *node = top
    cdef ws_attr_t *attr
    out = bytearray()
    while node != NULL:
        if node.type == NODE_ELEMENT:
            attr = _attr(node, ATTR_CLASS)
            if attr != NULL and attr.value != NULL and attr.value.data != NULL and attr.value.length:
                if out:
                    out += b" "
                out += attr.value.data[:attr.value.length]
        node = _next(node, top)
    return out.decode("utf-8", "replace")
