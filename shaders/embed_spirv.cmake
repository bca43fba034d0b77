# Turns a .spv file into a C++ array of 32-bit words (SPIR-V is word-addressed).
file(READ ${SPV} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR rem "${n} % 8")
if(NOT rem EQUAL 0)
  message(FATAL_ERROR "${SPV}: size is not a multiple of 4 bytes")
endif()
# Little-endian bytes b0 b1 b2 b3 -> word 0xb3b2b1b0.
string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1u," words "${hex}")
string(REGEX REPLACE "((0x[0-9a-f]+u,){8})" "\\1\n" words "${words}")
file(WRITE ${OUT} "static const uint32_t spv_${NAME}[] = {\n${words}\n};\n")
