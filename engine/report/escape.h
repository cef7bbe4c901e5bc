// Escaping for every place a report puts text: HTML text and attributes, JSON inside a <script>
// element, Markdown text and table cells. Names come from traces and templates and may hold
// anything (<script>, quotes, backticks, pipes, control characters, non-ASCII).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace profsh::report {

// & < > " ' as character references; other bytes (UTF-8 included) unchanged.
std::string EscapeHtml(std::string_view text);
// A JSON string literal (quotes included) safe inside <script>: <, > and & as \u escapes, so
// "</script>" or "<!--" in a name cannot end or change the element.
std::string JsonString(std::string_view text);
// Markdown text: CommonMark's punctuation that could start markup is backslash-escaped, line
// breaks become spaces, so a name renders as itself and cannot open a link, code or HTML.
std::string EscapeMarkdown(std::string_view text);
// A GitHub table cell: the same but for a leading "-" or "+", which is no list item there.
std::string EscapeMarkdownCell(std::string_view text);
std::string Base64(std::string_view bytes);
// A relative link target for Markdown: bytes outside RFC 3986's unreserved set and "/" as %XX,
// so a file name with spaces, parentheses or brackets stays one link.
std::string PercentEncodePath(std::string_view path);
// A section id: non-empty, only ASCII letters, digits, "-" and "_" (it is an HTML id and a
// fragment in both outputs, written without escaping).
bool IsSafeId(std::string_view id);

// Appends the parts in order (no temporaries: GCC 12 warns, wrongly, of overlapping copies in
// `"literal" + std::string(...)`).
inline void Append(std::string& out, std::initializer_list<std::string_view> parts) {
  for (std::string_view p : parts) out.append(p.data(), p.size());
}

}  // namespace profsh::report
