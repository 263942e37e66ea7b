#include <cxxabi.h>
#include <fmt/format.h>

#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <netbuf/transport/message.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace netbuf {

namespace {

// A demangled type name as a tree: a sequence of pieces, each some text optionally followed by a
// bracketed group of comma-separated types: `std::vector` + <int>, `void ` + (*) + (int, char).
struct TypeNode;
struct Piece {
  std::string text;
  char open = 0;  // '<' or '(' when a group follows the text, else 0
  std::vector<TypeNode> args;
};
struct TypeNode {
  std::vector<Piece> pieces;
};

std::string trimmed(std::string_view s) {
  const auto b = s.find_first_not_of(' ');
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(' ');
  return std::string(s.substr(b, e - b + 1));
}

/// Parses up to a ',' or a closing bracket at this level (not consumed); false when a bracket is
/// left open or closed by the wrong kind.
bool parse(std::string_view s, std::size_t& i, TypeNode& out) {
  Piece piece;
  while (i < s.size()) {
    const char c = s[i];
    if (c == ',' || c == '>' || c == ')') break;
    if (c != '<' && c != '(') {
      piece.text += c;
      ++i;
      continue;
    }
    const char close = c == '<' ? '>' : ')';
    piece.open = c;
    ++i;
    for (;;) {
      TypeNode arg;
      if (!parse(s, i, arg)) return false;
      piece.args.push_back(std::move(arg));
      if (i >= s.size()) return false;
      if (s[i] == ',') {
        ++i;
        continue;
      }
      if (s[i] != close) return false;
      ++i;
      break;
    }
    out.pieces.push_back(std::move(piece));
    piece = Piece();
  }
  if (!trimmed(piece.text).empty() || out.pieces.empty()) out.pieces.push_back(std::move(piece));
  return true;
}

std::string print(const TypeNode& n) {
  std::string s;
  for (const Piece& p : n.pieces) {
    s += p.text;
    if (p.open == 0) continue;
    s += p.open;
    for (std::size_t k = 0; k < p.args.size(); ++k) {
      if (k != 0) s += ", ";
      s += trimmed(print(p.args[k]));
    }
    s += p.open == '<' ? '>' : ')';
  }
  return s;
}

/// The template a piece's text names: its last word ("std::vector" in "const std::vector").
std::string_view templateName(const std::string& text) {
  std::string_view t(text);
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  const auto sp = t.find_last_of(' ');
  return sp == std::string_view::npos ? t : t.substr(sp + 1);
}

/// Whether `a`, an argument of the standard template `owner`, is one the library fills in by
/// default (std::allocator<T> of a container...), which nobody writes. Only those templates'
/// trailing arguments are dropped: std::pair<int, std::less<int>> keeps its second one.
bool isDefaultArg(std::string_view owner, const TypeNode& a) {
  if (a.pieces.size() != 1 || a.pieces[0].open != '<') return false;
  const std::string_view name = templateName(a.pieces[0].text);
  static constexpr std::string_view kAllocating[] = {"std::vector",
                                                     "std::deque",
                                                     "std::list",
                                                     "std::forward_list",
                                                     "std::basic_string",
                                                     "std::map",
                                                     "std::multimap",
                                                     "std::set",
                                                     "std::multiset",
                                                     "std::unordered_map",
                                                     "std::unordered_multimap",
                                                     "std::unordered_set",
                                                     "std::unordered_multiset"};
  auto among = [&](std::initializer_list<std::string_view> owners) {
    for (std::string_view o : owners)
      if (o == owner) return true;
    return false;
  };
  if (name == "std::allocator") {
    for (std::string_view o : kAllocating)
      if (o == owner) return true;
    return false;
  }
  if (name == "std::char_traits") return among({"std::basic_string", "std::basic_string_view"});
  if (name == "std::less") return among({"std::map", "std::multimap", "std::set", "std::multiset"});
  if (name == "std::hash" || name == "std::equal_to") {
    return among({"std::unordered_map", "std::unordered_multimap", "std::unordered_set",
                  "std::unordered_multiset"});
  }
  if (name == "std::default_delete") return owner == "std::unique_ptr";
  return false;
}

/// Rewrites a name as a C++ programmer writes the type: library namespaces stripped of their ABI
/// tags, defaulted arguments dropped, standard aliases (std::string) and netbuf's aliases
/// (netbuf::AnyByteBuf) restored.
void simplify(TypeNode& n) {
  for (Piece& p : n.pieces) {
    for (const std::string_view tag : {"std::__cxx11::", "std::__1::", "std::__debug::"}) {
      for (auto at = p.text.find(tag); at != std::string::npos; at = p.text.find(tag))
        p.text.replace(at, tag.size(), "std::");
    }
    for (TypeNode& a : p.args) simplify(a);
    if (p.open != '<') continue;
    const std::string_view name = templateName(p.text);
    while (p.args.size() > 1 && isDefaultArg(name, p.args.back())) p.args.pop_back();
    const std::size_t prefix = p.text.size() - name.size();
    auto rename = [&](const char* alias) {
      p.text = p.text.substr(0, prefix) + alias;
      p.open = 0;
      p.args.clear();
    };
    const bool oneChar = p.args.size() == 1 && trimmed(print(p.args[0])) == "char";
    if (name == "std::basic_string" && oneChar) {
      rename("std::string");
    } else if (name == "std::basic_string_view" && oneChar) {
      rename("std::string_view");
    } else if (name == "std::variant" && p.args.size() == 2 &&
               trimmed(print(p.args[0])) == "netbuf::ByteBuf" &&
               trimmed(print(p.args[1])) == "netbuf::CompositeByteBuf") {
      rename("netbuf::AnyByteBuf");
    }
  }
}

}  // namespace

std::string readableTypeName(std::string_view demangled) {
  std::size_t i = 0;
  TypeNode root;
  if (!parse(demangled, i, root) || i != demangled.size()) return std::string(demangled);
  simplify(root);
  return trimmed(print(root));
}

std::string typeName(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !demangled) return std::string(type.name());
  return readableTypeName(demangled.get());
}

void Message::wrongType(const std::type_info& wanted) const {
  throw MessageTypeError(
      fmt::format("message is a {}, not a {}", typeName(type()), typeName(wanted)));
}

}  // namespace netbuf
