#pragma once
// NETBUF_JSON_INLINE and NETBUF_JSON_FLATTEN: the forced inlining of JsonStreamWriter's calls and
// of the typed JSON traits built on them (json_traits.hpp, NETBUF_JSON_FIELDS).
//
// The stream writer's calls are forced inline: its speed depends on the compiler seeing that the
// writer's address never escapes (see JsonStreamWriter's general code), and one out-of-line call
// that takes `this` would put its state back in memory for the whole caller.
#if defined(__GNUC__)
#define NETBUF_JSON_INLINE [[gnu::always_inline]] inline
#define NETBUF_JSON_FLATTEN [[gnu::flatten]] inline
#else
#define NETBUF_JSON_INLINE inline
#define NETBUF_JSON_FLATTEN inline
#endif
