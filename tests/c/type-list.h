// type-list.h - the optional weight-type filter of the C test programs
// (a command-line argument such as "f32,f16,bf16").
#pragma once

#include <stdbool.h>
#include <string.h>

// Whether name is one of the comma-separated names of list.
static inline bool in_list(const char * list, const char * name) {
    const size_t n = strlen(name);
    for (const char * p = list; *p != '\0'; p++) {
        if ((p == list || p[-1] == ',') && strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0')) return true;
    }
    return false;
}

// Whether a test runs type name: every type without a list (NULL).
static inline bool type_selected(const char * list, const char * name) { return list == NULL || in_list(list, name); }
