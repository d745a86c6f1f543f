// libxml2 (Debian's libxml2-dev), imported as the CXML2 module: its streaming reader
// parses S3's answers (PackageRemote's S3XML).
#include <libxml/xmlreader.h>
