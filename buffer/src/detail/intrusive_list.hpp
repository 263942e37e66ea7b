#pragma once
// listPush and listRemove: doubly linked intrusive lists (a head pointer; nodes with `prev` and
// `next`), as the pool keeps its partial subpages and its leak records. The caller locks.

namespace netbuf::detail {

template <class T>
void listRemove(T*& head, T* n) noexcept {
  if (n->prev != nullptr)
    n->prev->next = n->next;
  else
    head = n->next;
  if (n->next != nullptr) n->next->prev = n->prev;
  n->prev = n->next = nullptr;
}
template <class T>
void listPush(T*& head, T* n) noexcept {
  n->prev = nullptr;
  n->next = head;
  if (head != nullptr) head->prev = n;
  head = n;
}

}  // namespace netbuf::detail
