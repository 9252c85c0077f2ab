/*
 * A PKCS#11 module that is SoftHSM except for C_Sign, which blocks while HANG_FILE exists: a
 * network HSM that stops answering mid-signature. Built by test/support/hanging-module.ts with
 * -DREAL_MODULE and -DHANG_FILE. The function list is declared here by position (PKCS#11 2.40:
 * a CK_VERSION, then 68 function pointers; C_Sign is the 44th) so no PKCS#11 header is needed.
 */
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

typedef unsigned long CK_RV;
typedef struct { unsigned char major, minor; } CK_VERSION;
typedef struct { CK_VERSION version; void *functions[68]; } FUNCTION_LIST;
typedef CK_RV (*GET_FUNCTION_LIST)(FUNCTION_LIST **);
typedef CK_RV (*SIGN)(unsigned long, unsigned char *, unsigned long, unsigned char *, unsigned long *);

#define C_GET_FUNCTION_LIST_INDEX 3
#define C_SIGN_INDEX 43
#define CKR_GENERAL_ERROR 5

static FUNCTION_LIST list;
static SIGN real_sign;

static CK_RV hanging_sign(unsigned long session, unsigned char *data, unsigned long length, unsigned char *signature, unsigned long *signature_length) {
  while (access(HANG_FILE, F_OK) == 0) usleep(10000);
  return real_sign(session, data, length, signature, signature_length);
}

CK_RV C_GetFunctionList(FUNCTION_LIST **out) {
  void *library = dlopen(REAL_MODULE, RTLD_NOW);
  if (library == NULL) return CKR_GENERAL_ERROR;
  GET_FUNCTION_LIST get = (GET_FUNCTION_LIST)dlsym(library, "C_GetFunctionList");
  FUNCTION_LIST *real = NULL;
  if (get == NULL || get(&real) != 0) return CKR_GENERAL_ERROR;
  memcpy(&list, real, sizeof list);
  real_sign = (SIGN)list.functions[C_SIGN_INDEX];
  list.functions[C_SIGN_INDEX] = (void *)hanging_sign;
  list.functions[C_GET_FUNCTION_LIST_INDEX] = (void *)C_GetFunctionList;
  *out = &list;
  return 0;
}
