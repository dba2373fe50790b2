// Mobile network operators' autonomous systems (spec 2.7 MOBILE_CARRIER).
//
// Where this comes from: for each country, the mobile network operators that
// run their own radio network (the per-country "List of mobile network
// operators" articles and the operators' own names and registrations), each
// matched to the ASNs whose organisation name in @ip-location-db/asn
// (RouteViews / NRO / DB-IP, CC BY 4.0) belongs to it, plus spot checks that
// well-known mobile address blocks (e.g. 2607:fb90::/32, 2600:380::/32,
// 2a01:598::/29, 31.94.0.0/16) fall in the listed AS. Checked on 2026-11-23
// against @ip-location-db/asn 2.3.2026061719. The trailing
// `// org:` comment is the organisation name the data gives for that ASN.
//
// mobileOnly:
//   true  — the AS is the operator's mobile network and home/fixed lines are
//           absent or a small share (roughly under a tenth) of its users, so
//           an address here is very likely a phone or a cellular modem.
//   false — the same AS also carries a large fixed-line/home-broadband (or
//           cable, or business) population, or we are not sure; an address
//           here only says "this operator", not "mobile data".
//   Fixed-wireless home internet sold over the cellular network (Verizon/
//   T-Mobile 5G Home, Jio AirFiber, rain) is counted as mobile: it is the same
//   CGNAT'd radio network.
//
// Not here: MVNOs without their own AS, and operators whose mobile traffic
// runs in an AS we could not find in the data: Freedom Mobile (CA), Ice
// (NO), Hot Mobile and Golan (IL), WOM Colombia, SIMBA (SG), China Broadnet,
// Digi Portugal, 1&1's own mobile network (DE, maybe in AS8881), and the
// legacy Sprint ASes (now inside T-Mobile). The organisation names in the
// data go stale as companies merge; the number is what counts.
//
// To add a carrier: find its ASN(s) in the data, e.g.
//   grep -i '<name>' node_modules/@ip-location-db/asn/asn-ipv4.csv
// check that the org name fits the operator (note it if it differs from the
// brand), decide mobileOnly by the rule above (false when unsure, and say why
// in `note`), add one entry per ASN with the data's org name as a trailing
// `// org:` comment, and keep ASNs unique. Look for IPv6-only ASNs under the
// same org name too (asn-ipv6.csv): several carriers put mobile IPv6 there.

export interface MobileCarrier {
  asn: number;
  /** Brand or operator as people know it. */
  operator: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
  /** True when the AS carries (essentially) only mobile subscribers; see above. */
  mobileOnly: boolean;
  note?: string;
}

export const MOBILE_CARRIERS: readonly MobileCarrier[] = [
  // ── United States ─────────────────────────────────────────────────────
  {
    asn: 21928,
    operator: 'T-Mobile US',
    country: 'US',
    mobileOnly: true,
    note: 'Includes Metro by T-Mobile and the former Sprint base; IPv6 2607:fb90::/32 is here too.',
  }, // org: T-Mobile USA, Inc.
  {
    asn: 6614,
    operator: 'T-Mobile US (ex-UScellular)',
    country: 'US',
    mobileOnly: true,
    note: "UScellular's AS; its wireless business went to T-Mobile in 2025 and the data now names T-Mobile USA.",
  }, // org: T-Mobile USA, Inc.
  { asn: 22394, operator: 'Verizon Wireless', country: 'US', mobileOnly: true, note: 'Cellco Partnership; the data names it "Verizon Business".' }, // org: Verizon Business
  {
    asn: 6167,
    operator: 'Verizon Wireless',
    country: 'US',
    mobileOnly: true,
    note: 'Cellco; IPv6 2600:1000::–2600:1007:: is here. Also Verizon 5G/LTE Home (fixed wireless over the cellular network).',
  }, // org: Verizon Business
  {
    asn: 20057,
    operator: 'AT&T Mobility',
    country: 'US',
    mobileOnly: true,
    note: 'Includes Cricket; IPv6 2600:380::/32 and 2600:387::/32 are here. Data names it "AT&T Enterprises, LLC".',
  }, // org: AT&T Enterprises, LLC
  {
    asn: 398378,
    operator: 'Boost Mobile (EchoStar)',
    country: 'US',
    mobileOnly: true,
    note: 'Own 5G network (ex-DISH Wireless); much of its base still roams on AT&T/T-Mobile.',
  }, // org: Boost Mobile

  // ── Canada ────────────────────────────────────────────────────────────
  {
    asn: 812,
    operator: 'Rogers',
    country: 'CA',
    mobileOnly: false,
    note: 'Rogers cable internet and Rogers/Fido wireless share this AS (mobile IPv6 2605:8d80::/32).',
  }, // org: Rogers Communications Canada Inc.
  { asn: 36522, operator: 'Bell Mobility', country: 'CA', mobileOnly: true, note: 'Data names it "Bell Canada".' }, // org: Bell Canada
  {
    asn: 577,
    operator: 'Bell Canada',
    country: 'CA',
    mobileOnly: false,
    note: 'Bell fixed lines; part of Bell Mobility/Virgin Plus traffic also egresses here.',
  }, // org: Bell Canada
  { asn: 852, operator: 'Telus', country: 'CA', mobileOnly: false, note: 'Telus Mobility and Telus home internet share this AS.' }, // org: TELUS Communications Inc.
  {
    asn: 5769,
    operator: 'Vidéotron',
    country: 'CA',
    mobileOnly: false,
    note: 'Cable and mobile; Freedom Mobile (owned since 2023) was not found as a separate AS.',
  }, // org: Videotron Ltee
  { asn: 803, operator: 'SaskTel', country: 'CA', mobileOnly: false }, // org: Saskatchewan Telecommunications

  // ── Mexico ────────────────────────────────────────────────────────────
  {
    asn: 28403,
    operator: 'Telcel',
    country: 'MX',
    mobileOnly: true,
    note: 'Radiomóvil Dipsa. Some Telcel traffic may egress via Telmex Uninet AS8151 (fixed, not listed).',
  }, // org: RadioMovil Dipsa, S.A. de C.V.
  { asn: 28469, operator: 'AT&T México', country: 'MX', mobileOnly: true }, // org: AT&T COMUNICACIONES DIGITALES S DE RL
  {
    asn: 7438,
    operator: 'Movistar México (Pegaso PCS)',
    country: 'MX',
    mobileOnly: true,
    note: "Telefónica's Mexican mobile arm; its customers now ride AT&T México's radio network.",
  }, // org: Pegaso PCS, S.A. de C.V.
  { asn: 265540, operator: 'Altán Redes (Red Compartida)', country: 'MX', mobileOnly: true, note: 'Wholesale shared LTE network used by MVNOs such as Bait.' }, // org: ALTAN REDES, S.A.P.I. de C. V.

  // ── Brazil ────────────────────────────────────────────────────────────
  {
    asn: 26599,
    operator: 'Vivo',
    country: 'BR',
    mobileOnly: false,
    note: "Telefônica Brasil's main (historically mobile) AS; Vivo Fibra may share it, unverified.",
  }, // org: TELEFONICA BRASIL S.A
  { asn: 26615, operator: 'TIM Brasil', country: 'BR', mobileOnly: true, note: 'TIM UltraFibra home broadband (~1M lines vs ~60M mobile) shares the AS.' }, // org: TIM S/A
  {
    asn: 22085,
    operator: 'Claro Brasil',
    country: 'BR',
    mobileOnly: false,
    note: "Believed to be Claro's mobile AS (IPv6 2804:388::/30); not verified, Claro fixed/NET is AS28573.",
  }, // org: Claro S/A

  // ── Argentina ─────────────────────────────────────────────────────────
  { asn: 7303, operator: 'Personal (Telecom Argentina)', country: 'AR', mobileOnly: false, note: 'Personal mobile and Fibertel/Arnet fixed share this AS.' }, // org: Telecom Argentina S.A.
  {
    asn: 22927,
    operator: 'Movistar Argentina',
    country: 'AR',
    mobileOnly: false,
    note: 'Telefónica de Argentina fixed + mobile; bought by Telecom Argentina in 2025.',
  }, // org: Telefonica de Argentina
  { asn: 262175, operator: 'Movistar Argentina', country: 'AR', mobileOnly: true, note: 'Telefónica Móviles Argentina.' }, // org: Telefonica Moviles Argentina S.A. (Movistar Argentina)
  { asn: 11315, operator: 'Movistar Argentina', country: 'AR', mobileOnly: true, note: 'IPv6-only in the data (2800:a00::/32): Telefónica Móviles Argentina.' }, // org: Telefonica Moviles Argentina S.A. (Movistar Argentina)
  {
    asn: 11664,
    operator: 'Claro Argentina',
    country: 'AR',
    mobileOnly: false,
    note: 'Techtel is AMX (Claro) Argentina; also fixed/business and PY/UY space. Mobile egress here unverified.',
  }, // org: Techtel LMDS Comunicaciones Interactivas S.A.

  // ── Chile ─────────────────────────────────────────────────────────────
  { asn: 27925, operator: 'Entel', country: 'CL', mobileOnly: true, note: 'Entel PCS, the mobile arm.' }, // org: Entel PCS Telecomunicaciones S.A.
  { asn: 27651, operator: 'Entel', country: 'CL', mobileOnly: false }, // org: ENTEL CHILE S.A.
  { asn: 27680, operator: 'Movistar Chile', country: 'CL', mobileOnly: true, note: 'Telefónica Móvil de Chile.' }, // org: TELEFONICA MOVIL DE CHILE S.A.
  { asn: 7418, operator: 'Movistar Chile', country: 'CL', mobileOnly: false }, // org: TELEFONICA CHILE S.A.
  { asn: 27995, operator: 'Claro Chile', country: 'CL', mobileOnly: true, note: 'Claro mobile; ClaroVTR fixed is AS22047/AS6535.' }, // org: CLARO CHILE S.A.
  { asn: 52341, operator: 'WOM Chile', country: 'CL', mobileOnly: true }, // org: WOM S.A.

  // ── Colombia ──────────────────────────────────────────────────────────
  { asn: 26611, operator: 'Claro Colombia', country: 'CO', mobileOnly: true, note: 'Comcel, the mobile company; Claro fixed is Telmex Colombia AS10620.' }, // org: COMCEL S.A.
  { asn: 27831, operator: 'Tigo Colombia', country: 'CO', mobileOnly: true, note: 'Colombia Móvil; Tigo-UNE fixed is AS13489.' }, // org: Colombia Movil
  { asn: 3816, operator: 'Movistar Colombia', country: 'CO', mobileOnly: false }, // org: COLOMBIA TELECOMUNICACIONES S.A. ESP

  // ── Peru ──────────────────────────────────────────────────────────────
  { asn: 12252, operator: 'Claro Perú', country: 'PE', mobileOnly: false, note: 'América Móvil Perú: mobile plus Claro home/HFC.' }, // org: America Movil Peru S.A.C.
  { asn: 6147, operator: 'Movistar Perú', country: 'PE', mobileOnly: false }, // org: Telefonica del Peru S.A.A.
  { asn: 21575, operator: 'Entel Perú', country: 'PE', mobileOnly: true }, // org: ENTEL PERU S.A.
  { asn: 262210, operator: 'Bitel', country: 'PE', mobileOnly: true, note: 'Viettel Perú.' }, // org: VIETTEL PERU S.A.C.

  // ── United Kingdom ────────────────────────────────────────────────────
  {
    asn: 2856,
    operator: 'EE (BT)',
    country: 'GB',
    mobileOnly: false,
    note: "EE mobile now egresses in BT's AS (31.90.0.0–31.94.255.255, 2a01:4c8::/29 are here); shared with BT home broadband. The old EE AS12576 is not in the data.",
  }, // org: British Telecommunications PLC
  { asn: 25135, operator: 'Vodafone UK', country: 'GB', mobileOnly: true }, // org: Vodafone Limited
  { asn: 5378, operator: 'Vodafone UK', country: 'GB', mobileOnly: false, note: 'Vodafone UK backbone: mobile plus fixed/business.' }, // org: Vodafone Limited
  { asn: 206067, operator: 'Three UK', country: 'GB', mobileOnly: true, note: 'Hutchison 3G UK (merged into VodafoneThree 2025).' }, // org: Hutchison 3G UK Limited
  { asn: 35228, operator: 'O2 UK (Virgin Media O2)', country: 'GB', mobileOnly: true, note: 'Telefónica UK; Virgin Media cable is AS5089.' }, // org: Telefonica UK Limited
  { asn: 29180, operator: 'O2 UK (Virgin Media O2)', country: 'GB', mobileOnly: true, note: 'Telefónica UK mobile pools (82.132.x).' }, // org: Telefonica UK Limited

  // ── Germany ───────────────────────────────────────────────────────────
  { asn: 3320, operator: 'Telekom Deutschland', country: 'DE', mobileOnly: false, note: 'Mobile (IPv6 2a01:598::/29) and DSL/fibre share this AS.' }, // org: Deutsche Telekom AG
  { asn: 3209, operator: 'Vodafone Germany', country: 'DE', mobileOnly: false, note: 'Mobile and DSL; Vodafone cable is AS31334.' }, // org: Vodafone GmbH
  { asn: 6805, operator: 'O2 Germany (Telefónica)', country: 'DE', mobileOnly: true, note: 'O2 DSL/cable home lines (~2M vs ~45M mobile) share it.' }, // org: Telefonica Germany GmbH & Co.OHG
  { asn: 12638, operator: 'O2 Germany (ex-E-Plus)', country: 'DE', mobileOnly: true, note: 'Legacy E-Plus AS, now Telefónica Germany.' }, // org: Telefonica Germany GmbH & Co.OHG
  {
    asn: 8881,
    operator: '1&1',
    country: 'DE',
    mobileOnly: false,
    note: "1&1 Versatel: 1&1 DSL/fibre; unsure whether 1&1's own Open-RAN mobile network egresses here.",
  }, // org: 1&1 Versatel GmbH

  // ── France ────────────────────────────────────────────────────────────
  { asn: 3215, operator: 'Orange France', country: 'FR', mobileOnly: false }, // org: Orange S.A.
  { asn: 15557, operator: 'SFR', country: 'FR', mobileOnly: false }, // org: Societe Francaise Du Radiotelephone - SFR SA
  { asn: 5410, operator: 'Bouygues Telecom', country: 'FR', mobileOnly: false }, // org: Bouygues Telecom SA
  {
    asn: 51207,
    operator: 'Free Mobile',
    country: 'FR',
    mobileOnly: true,
    note: 'Free home broadband is AS12322. DB-IP places ~1/4 of the space in Italy (likely Iliad Italia).',
  }, // org: Free Mobile SAS

  // ── Spain ─────────────────────────────────────────────────────────────
  { asn: 3352, operator: 'Movistar (Telefónica España)', country: 'ES', mobileOnly: false }, // org: TELEFONICA DE ESPANA S.A.U.
  {
    asn: 12479,
    operator: 'Orange Spain (MasOrange)',
    country: 'ES',
    mobileOnly: false,
    note: 'MasOrange also runs Yoigo/MásMóvil; where Yoigo users egress after the merger is unverified.',
  }, // org: Orange Espagne SA
  { asn: 12430, operator: 'Vodafone Spain', country: 'ES', mobileOnly: false }, // org: VODAFONE ESPANA S.A.U.
  {
    asn: 62352,
    operator: 'Yoigo (Xfera Móviles)',
    country: 'ES',
    mobileOnly: true,
    note: 'Small (5k IPv4); most Yoigo traffic probably uses MasOrange/MásMóvil ASes.',
  }, // org: XFERA Moviles S.A.
  { asn: 16206, operator: 'Yoigo (Xfera Móviles)', country: 'ES', mobileOnly: true, note: 'IPv6-only in the data (2a01:48::/32).' }, // org: XFERA Moviles S.A.
  { asn: 57269, operator: 'Digi Spain', country: 'ES', mobileOnly: false, note: 'Mobile and fibre.' }, // org: DIGI SPAIN TELECOM S.L.U.

  // ── Italy ─────────────────────────────────────────────────────────────
  { asn: 16232, operator: 'TIM', country: 'IT', mobileOnly: true, note: 'The ex-TIM (Telecom Italia Mobile) AS; TIM fixed is AS3269.' }, // org: Telecom Italia S.p.A.
  { asn: 3269, operator: 'TIM', country: 'IT', mobileOnly: false }, // org: Telecom Italia S.p.A.
  { asn: 30722, operator: 'Vodafone Italia', country: 'IT', mobileOnly: false, note: 'Mobile plus ~3M fixed lines (now Fastweb + Vodafone).' }, // org: Vodafone Italia S.p.A.
  { asn: 24608, operator: 'WindTre', country: 'IT', mobileOnly: true, note: 'Ex-H3G Italia (3 Italia).' }, // org: WIND TRE S.P.A.
  { asn: 1267, operator: 'WindTre', country: 'IT', mobileOnly: false, note: 'Ex-Wind: mobile and fixed.' }, // org: WIND TRE S.P.A.
  {
    asn: 29447,
    operator: 'Iliad Italia',
    country: 'IT',
    mobileOnly: false,
    note: 'Data names it "SCALEWAY S.A.S." (Iliad group) but all its space geolocates to Italy; believed to be Iliad Italia (mobile + fibre). Unverified.',
  }, // org: SCALEWAY S.A.S.

  // ── Netherlands ───────────────────────────────────────────────────────
  { asn: 1136, operator: 'KPN', country: 'NL', mobileOnly: false }, // org: KPN B.V.
  { asn: 33915, operator: 'Vodafone NL (VodafoneZiggo)', country: 'NL', mobileOnly: false, note: 'Vodafone mobile and Ziggo cable share this AS.' }, // org: Vodafone Libertel B.V.
  { asn: 31615, operator: 'Odido (ex-T-Mobile NL)', country: 'NL', mobileOnly: true, note: 'Mobile pools (84.241.192.0/18, 89.205.128.0/17, 178.225.0.0/16).' }, // org: Odido Netherlands B.V.
  { asn: 50266, operator: 'Odido', country: 'NL', mobileOnly: false, note: 'Mostly Odido home broadband (ex-T-Mobile Thuis); may carry some mobile.' }, // org: Odido Netherlands B.V.
  { asn: 13127, operator: 'Odido (ex-Tele2 NL)', country: 'NL', mobileOnly: false }, // org: Odido Netherlands B.V.
  { asn: 25596, operator: 'Odido', country: 'NL', mobileOnly: false, note: 'IPv6-only in the data (2a02:58::/32); fixed or mobile unverified.' }, // org: Odido Netherlands B.V.

  // ── Poland ────────────────────────────────────────────────────────────
  { asn: 5617, operator: 'Orange Polska', country: 'PL', mobileOnly: false }, // org: Orange Polska Spolka Akcyjna
  { asn: 39603, operator: 'Play', country: 'PL', mobileOnly: true, note: "P4; Play's UPC cable network is AS9141." }, // org: P4 Sp. z o.o.
  { asn: 12912, operator: 'T-Mobile Polska', country: 'PL', mobileOnly: true, note: 'Small fixed/business base shares it.' }, // org: T-Mobile Polska S.A.
  { asn: 8374, operator: 'Plus (Polkomtel)', country: 'PL', mobileOnly: true }, // org: Polkomtel Sp. z o.o.

  // ── India ─────────────────────────────────────────────────────────────
  { asn: 55836, operator: 'Jio', country: 'IN', mobileOnly: true, note: 'JioFiber/AirFiber homes (a few % of ~470M subscribers) share the AS.' }, // org: Reliance Jio Infocomm Limited
  { asn: 45609, operator: 'Airtel', country: 'IN', mobileOnly: true, note: 'Airtel mobile; Airtel broadband is AS24560.' }, // org: Bharti Airtel Limited
  { asn: 55557, operator: 'Airtel', country: 'IN', mobileOnly: true, note: 'Airtel mobile IPv6 (2401:4900::/32); almost no IPv4.' }, // org: Bharti Airtel Limited
  { asn: 38266, operator: 'Vi (Vodafone Idea)', country: 'IN', mobileOnly: true }, // org: Vodafone Idea Ltd. (VIL)
  { asn: 55410, operator: 'Vi (Vodafone Idea)', country: 'IN', mobileOnly: true }, // org: Vodafone Idea Ltd. (VIL)
  { asn: 45271, operator: 'Vi (Vodafone Idea)', country: 'IN', mobileOnly: true, note: 'Ex-Idea Cellular.' }, // org: Vodafone Idea Ltd. (VIL)
  { asn: 55644, operator: 'Vi (Vodafone Idea)', country: 'IN', mobileOnly: true, note: 'Mostly IPv6 (2400:c700::/32).' }, // org: Vodafone Idea Ltd. (VIL)
  { asn: 9829, operator: 'BSNL', country: 'IN', mobileOnly: false }, // org: Bharat Sanchar Nigam Ltd
  { asn: 17813, operator: 'MTNL', country: 'IN', mobileOnly: false }, // org: Mahanagar Telephone Nigam Limited

  // ── Japan ─────────────────────────────────────────────────────────────
  { asn: 9605, operator: 'NTT docomo', country: 'JP', mobileOnly: true, note: 'docomo Hikari fixed runs over OCN (AS4713).' }, // org: NTT DOCOMO, INC.
  { asn: 2516, operator: 'au (KDDI)', country: 'JP', mobileOnly: false, note: 'au mobile, UQ and au Hikari share this AS.' }, // org: KDDI CORPORATION
  { asn: 17676, operator: 'SoftBank', country: 'JP', mobileOnly: false, note: 'SoftBank/Y!mobile mobile and SoftBank Hikari/Yahoo! BB share this AS.' }, // org: SoftBank Corp.
  { asn: 138384, operator: 'Rakuten Mobile', country: 'JP', mobileOnly: true }, // org: Rakuten Mobile, Inc.

  // ── South Korea ───────────────────────────────────────────────────────
  { asn: 9644, operator: 'SK Telecom', country: 'KR', mobileOnly: true, note: 'SK Broadband fixed is AS9318.' }, // org: SK Telecom
  { asn: 4766, operator: 'KT', country: 'KR', mobileOnly: false }, // org: Korea Telecom
  { asn: 3559, operator: 'KT', country: 'KR', mobileOnly: false, note: 'IPv6-only in the data (2001:e60::/32).' }, // org: Korea Telecom
  { asn: 17858, operator: 'LG U+', country: 'KR', mobileOnly: false }, // org: LG POWERCOMM
  {
    asn: 17853,
    operator: 'LG U+',
    country: 'KR',
    mobileOnly: true,
    note: 'Ex-LG Telecom (the mobile company before the 2010 merger). Unverified which LG U+ users it carries.',
  }, // org: LGTELECOM

  // ── China ─────────────────────────────────────────────────────────────
  { asn: 9808, operator: 'China Mobile', country: 'CN', mobileOnly: false, note: 'CMNET; China Mobile is also the largest home broadband provider.' }, // org: China Mobile
  { asn: 56040, operator: 'China Mobile', country: 'CN', mobileOnly: false, note: 'Provincial network.' }, // org: China Mobile Communications Corporation
  { asn: 56041, operator: 'China Mobile', country: 'CN', mobileOnly: false, note: 'Provincial network.' }, // org: China Mobile Communications Corporation
  { asn: 56042, operator: 'China Mobile', country: 'CN', mobileOnly: false, note: 'Provincial network.' }, // org: China Mobile Communications Corporation
  { asn: 56044, operator: 'China Mobile', country: 'CN', mobileOnly: false, note: 'Provincial network.' }, // org: China Mobile Communications Corporation
  { asn: 56045, operator: 'China Mobile', country: 'CN', mobileOnly: false, note: 'Provincial network.' }, // org: China Mobile Communications Corporation
  { asn: 56046, operator: 'China Mobile', country: 'CN', mobileOnly: false, note: 'Provincial network.' }, // org: China Mobile Communications Corporation
  { asn: 56047, operator: 'China Mobile', country: 'CN', mobileOnly: false, note: 'Provincial network.' }, // org: China Mobile Communications Corporation
  { asn: 56048, operator: 'China Mobile', country: 'CN', mobileOnly: false, note: 'Provincial network.' }, // org: China Mobile Communications Corporation
  { asn: 24400, operator: 'China Mobile', country: 'CN', mobileOnly: false, note: 'Provincial network.' }, // org: China Mobile
  { asn: 24444, operator: 'China Mobile', country: 'CN', mobileOnly: false, note: 'Provincial network.' }, // org: China Mobile
  { asn: 24445, operator: 'China Mobile', country: 'CN', mobileOnly: false, note: 'Provincial network.' }, // org: China Mobile
  { asn: 24547, operator: 'China Mobile', country: 'CN', mobileOnly: false, note: 'Provincial network.' }, // org: China Mobile
  { asn: 38019, operator: 'China Mobile', country: 'CN', mobileOnly: false, note: 'Provincial network.' }, // org: China Mobile
  { asn: 132525, operator: 'China Mobile', country: 'CN', mobileOnly: false }, // org: China Mobile Communications Corporation
  { asn: 4837, operator: 'China Unicom', country: 'CN', mobileOnly: false }, // org: CHINA UNICOM China169 Backbone
  { asn: 4134, operator: 'China Telecom', country: 'CN', mobileOnly: false }, // org: Chinanet

  // ── Taiwan ────────────────────────────────────────────────────────────
  { asn: 17421, operator: 'Chunghwa Telecom (mobile)', country: 'TW', mobileOnly: true, note: "Chunghwa's Mobile Business Group; HiNet fixed is AS3462." }, // org: Mobile Business Group
  { asn: 3462, operator: 'Chunghwa Telecom', country: 'TW', mobileOnly: false }, // org: Chunghwa Telecom Co., Ltd.
  { asn: 9674, operator: 'Far EasTone', country: 'TW', mobileOnly: true, note: 'FET fixed ISPs are Seednet/New Century (AS4780, AS9919).' }, // org: Far EastTone Telecommunication Co., Ltd.
  { asn: 24158, operator: 'Taiwan Mobile', country: 'TW', mobileOnly: true, note: 'Taiwan Fixed Network is AS9924.' }, // org: Taiwan Mobile Co., Ltd.
  { asn: 17709, operator: 'Asia Pacific Telecom (Gt)', country: 'TW', mobileOnly: true, note: 'Merged into Far EasTone in 2023.' }, // org: Asia Pacific Telecom

  // ── Indonesia ─────────────────────────────────────────────────────────
  { asn: 23693, operator: 'Telkomsel', country: 'ID', mobileOnly: true, note: 'Telkom IndiHome fixed is AS7713.' }, // org: PT. Telekomunikasi Selular
  { asn: 4761, operator: 'Indosat Ooredoo Hutchison', country: 'ID', mobileOnly: true, note: 'Legacy Indosat/IM2 fixed and business space is small.' }, // org: PT. INDOSAT Tbk
  { asn: 45727, operator: 'Indosat Ooredoo Hutchison (ex-3)', country: 'ID', mobileOnly: true }, // org: PT Indosat Ooredoo Hutchison
  { asn: 24203, operator: 'XL Axiata (XLSmart)', country: 'ID', mobileOnly: true }, // org: PT XL Axiata
  { asn: 17885, operator: 'XL Axiata (XLSmart)', country: 'ID', mobileOnly: true }, // org: PT XL Axiata Tbk
  { asn: 139994, operator: 'XL Axiata (XLSmart)', country: 'ID', mobileOnly: true }, // org: PT XL Axiata Tbk
  {
    asn: 18004,
    operator: 'Smartfren (XLSmart)',
    country: 'ID',
    mobileOnly: true,
    note: 'Data names it "PT WIRELESS INDONESIA (WIN)"; Smartfren mobile pools (114.79.0.0/18) are here.',
  }, // org: PT WIRELESS INDONESIA ( WIN )
  { asn: 133798, operator: 'Smartfren (XLSmart)', country: 'ID', mobileOnly: true }, // org: PT. Smartfren Telecom, Tbk

  // ── Turkey ────────────────────────────────────────────────────────────
  { asn: 16135, operator: 'Turkcell', country: 'TR', mobileOnly: true, note: 'Turkcell Superonline fixed is AS34984.' }, // org: TURKCELL ILETISIM HIZMETLERI A.S.
  { asn: 15897, operator: 'Vodafone Turkey', country: 'TR', mobileOnly: true, note: 'Vodafone Net fixed is AS8386/AS15924.' }, // org: Vodafone Telekomunikasyon A.S.
  { asn: 20978, operator: 'Türk Telekom mobile (ex-Avea)', country: 'TR', mobileOnly: true, note: 'TT Mobil; Türk Telekom fixed is AS9121.' }, // org: TT Mobil Iletisim Hizmetleri A.S

  // ── Russia ────────────────────────────────────────────────────────────
  { asn: 8359, operator: 'MTS', country: 'RU', mobileOnly: false, note: 'MTS backbone: mobile and MTS home internet.' }, // org: MTS PJSC
  { asn: 3216, operator: 'Beeline (VimpelCom)', country: 'RU', mobileOnly: false }, // org: PJSC "Vimpelcom"
  { asn: 16345, operator: 'Beeline (VimpelCom)', country: 'RU', mobileOnly: false, note: 'Believed to be Beeline mobile; unverified.' }, // org: PJSC "Vimpelcom"
  { asn: 31133, operator: 'MegaFon', country: 'RU', mobileOnly: false, note: 'MegaFon backbone: mobile, transit and business.' }, // org: PJSC MegaFon
  { asn: 25159, operator: 'MegaFon', country: 'RU', mobileOnly: true, note: 'Moscow branch.' }, // org: PJSC MegaFon
  { asn: 31213, operator: 'MegaFon', country: 'RU', mobileOnly: true, note: 'Regional branch (North-West).' }, // org: PJSC MegaFon
  { asn: 31163, operator: 'MegaFon', country: 'RU', mobileOnly: true, note: 'Regional branch (Caucasus).' }, // org: PJSC MegaFon
  { asn: 31224, operator: 'MegaFon', country: 'RU', mobileOnly: true, note: 'Regional branch.' }, // org: PJSC MegaFon
  { asn: 31195, operator: 'MegaFon', country: 'RU', mobileOnly: true, note: 'Regional branch (Urals).' }, // org: PJSC MegaFon
  { asn: 31205, operator: 'MegaFon', country: 'RU', mobileOnly: true, note: 'Regional branch (Siberia).' }, // org: PJSC MegaFon
  { asn: 31208, operator: 'MegaFon', country: 'RU', mobileOnly: true, note: 'Regional branch.' }, // org: PJSC MegaFon
  { asn: 31261, operator: 'MegaFon', country: 'RU', mobileOnly: true, note: 'Regional branch.' }, // org: PJSC MegaFon
  { asn: 12958, operator: 'T2 (ex-Tele2 Russia)', country: 'RU', mobileOnly: true }, // org: T2 Mobile LLC
  { asn: 15378, operator: 'T2 (ex-Tele2 Russia)', country: 'RU', mobileOnly: true }, // org: T2 Mobile LLC
  { asn: 41330, operator: 'T2 (ex-Tele2 Russia)', country: 'RU', mobileOnly: true }, // org: T2 Mobile LLC
  { asn: 42437, operator: 'T2 (ex-Tele2 Russia)', country: 'RU', mobileOnly: true }, // org: T2 Mobile LLC
  { asn: 48092, operator: 'T2 (ex-Tele2 Russia)', country: 'RU', mobileOnly: true }, // org: T2 Mobile LLC
  { asn: 48190, operator: 'T2 (ex-Tele2 Russia)', country: 'RU', mobileOnly: true }, // org: T2 Mobile LLC

  // ── Australia ─────────────────────────────────────────────────────────
  {
    asn: 1221,
    operator: 'Telstra',
    country: 'AU',
    mobileOnly: false,
    note: 'Telstra mobile (e.g. 1.120.0.0–1.159.255.255, 2001:8004::/32) and fixed share this AS.',
  }, // org: Telstra Limited
  {
    asn: 4804,
    operator: 'Optus',
    country: 'AU',
    mobileOnly: false,
    note: 'Optus consumer AS (ex-Microplex): mobile (49.176.0.0–49.199.255.255) and home broadband.',
  }, // org: SingTel Optus Pty Ltd
  { asn: 133612, operator: 'Vodafone Australia (TPG Telecom)', country: 'AU', mobileOnly: true, note: 'TPG fixed is AS7545.' }, // org: Vodafone Australia Pty Ltd
  { asn: 18291, operator: 'Vodafone Australia (TPG Telecom)', country: 'AU', mobileOnly: true, note: 'Mostly IPv6 (2405:6e00::/32).' }, // org: Vodafone Australia Pty Ltd

  // ── Philippines ───────────────────────────────────────────────────────
  { asn: 132199, operator: 'Globe Telecom', country: 'PH', mobileOnly: true, note: 'Globe mobile; Globe At Home fixed is mostly AS4775.' }, // org: Globe Telecom Inc.
  { asn: 4775, operator: 'Globe Telecom', country: 'PH', mobileOnly: false }, // org: Globe Telecom (GMCR,INC)
  {
    asn: 10139,
    operator: 'Smart Communications',
    country: 'PH',
    mobileOnly: true,
    note: 'Data names it "Smart Broadband, Inc." (Smart\'s data arm, incl. LTE home Wi-Fi).',
  }, // org: Smart Broadband, Inc.
  { asn: 9299, operator: 'PLDT / Smart', country: 'PH', mobileOnly: false, note: 'PLDT fixed; some Smart mobile traffic may egress here.' }, // org: Philippine Long Distance Telephone Co.
  { asn: 139831, operator: 'DITO Telecommunity', country: 'PH', mobileOnly: true }, // org: DITO TELECOMMUNITY CORP.

  // ── Vietnam ───────────────────────────────────────────────────────────
  { asn: 7552, operator: 'Viettel', country: 'VN', mobileOnly: false, note: 'Viettel mobile and fixed share this AS.' }, // org: Viettel Group
  { asn: 45899, operator: 'VinaPhone (VNPT)', country: 'VN', mobileOnly: false, note: 'VNPT fixed and VinaPhone mobile.' }, // org: VNPT Corp
  { asn: 131429, operator: 'MobiFone', country: 'VN', mobileOnly: true }, // org: MOBIFONE Corporation
  { asn: 38247, operator: 'Vietnamobile', country: 'VN', mobileOnly: true }, // org: Vietnamobile Telecommunications Joint Stock Company

  // ── Austria ───────────────────────────────────────────────────────────
  { asn: 8447, operator: 'A1 Austria', country: 'AT', mobileOnly: false }, // org: A1 Telekom Austria AG
  {
    asn: 8412,
    operator: 'Magenta Telekom',
    country: 'AT',
    mobileOnly: false,
    note: 'T-Mobile Austria mobile and the ex-UPC cable network (2a02:8388::/32) share this AS.',
  }, // org: T-Mobile Austria GmbH
  { asn: 25255, operator: 'Drei (Hutchison Drei Austria)', country: 'AT', mobileOnly: true }, // org: Hutchison Drei Austria GmbH
  { asn: 8437, operator: 'Drei (Hutchison Drei Austria)', country: 'AT', mobileOnly: false, note: 'Ex-Tele2/Orange Austria: fixed and business.' }, // org: Hutchison Drei Austria GmbH
  {
    asn: 12635,
    operator: 'Drei (Hutchison Drei Austria)',
    country: 'AT',
    mobileOnly: false,
    note: 'IPv6-only in the data (2001:4b68::/29); fixed or mobile unverified.',
  }, // org: Hutchison Drei Austria GmbH

  // ── Belgium ───────────────────────────────────────────────────────────
  { asn: 5432, operator: 'Proximus', country: 'BE', mobileOnly: false }, // org: Proximus NV
  { asn: 47377, operator: 'Orange Belgium', country: 'BE', mobileOnly: false, note: 'Mobile plus cable/fixed (VOO is AS12392).' }, // org: Orange Belgium SA
  { asn: 6848, operator: 'Telenet / BASE', country: 'BE', mobileOnly: false }, // org: Telenet BV
  {
    asn: 25311,
    operator: 'Digi Belgium',
    country: 'BE',
    mobileOnly: false,
    note: 'Data names it "DIGI ROMANIA S.A." but all space geolocates to Belgium; mobile + fibre, launched 2024. Unverified.',
  }, // org: DIGI ROMANIA S.A.

  // ── Switzerland ───────────────────────────────────────────────────────
  { asn: 3303, operator: 'Swisscom', country: 'CH', mobileOnly: false }, // org: Swisscom (Schweiz) AG
  { asn: 6730, operator: 'Sunrise', country: 'CH', mobileOnly: false, note: 'Mobile plus the ex-UPC cable network.' }, // org: Sunrise GmbH
  { asn: 15796, operator: 'Salt', country: 'CH', mobileOnly: true, note: 'Salt Home fibre is small.' }, // org: Salt Mobile SA

  // ── Sweden ────────────────────────────────────────────────────────────
  { asn: 3301, operator: 'Telia Sweden', country: 'SE', mobileOnly: false }, // org: Telia Company AB
  { asn: 1257, operator: 'Tele2 Sweden', country: 'SE', mobileOnly: false, note: 'Also Tele2 Baltics space.' }, // org: Tele2 Sverige AB
  { asn: 8434, operator: 'Telenor Sweden', country: 'SE', mobileOnly: false }, // org: Telenor Sverige AB
  { asn: 44034, operator: 'Tre (Hi3G)', country: 'SE', mobileOnly: true, note: 'Hi3G Access AB; also carries 3 Denmark (~1/3 of the space geolocates to DK).' }, // org: Hi3G Access AB

  // ── Norway ────────────────────────────────────────────────────────────
  { asn: 2119, operator: 'Telenor Norway', country: 'NO', mobileOnly: false }, // org: Telenor Norge AS
  { asn: 25400, operator: 'Telia Norway', country: 'NO', mobileOnly: false, note: 'Mobile plus Get cable.' }, // org: Telia Norge AS

  // ── Denmark ───────────────────────────────────────────────────────────
  { asn: 3292, operator: 'TDC NET / YouSee', country: 'DK', mobileOnly: false }, // org: TDC Holding A/S
  { asn: 9158, operator: 'Telenor Denmark', country: 'DK', mobileOnly: false }, // org: Telenor A/S
  { asn: 3308, operator: 'Norlys (ex-Telia Denmark)', country: 'DK', mobileOnly: false }, // org: Norlys Digital A/S

  // ── Finland ───────────────────────────────────────────────────────────
  {
    asn: 719,
    operator: 'Elisa',
    country: 'FI',
    mobileOnly: false,
    note: 'Data names AS719 "RIPE Network Coordination Centre" (a quirk of the source); AS719 is Elisa Oyj, mobile + fixed.',
  }, // org: RIPE Network Coordination Centre
  { asn: 1759, operator: 'Telia Finland', country: 'FI', mobileOnly: false }, // org: Telia Finland Oyj
  { asn: 16086, operator: 'DNA', country: 'FI', mobileOnly: false }, // org: DNA Oyj

  // ── Ireland ───────────────────────────────────────────────────────────
  { asn: 5466, operator: 'eir', country: 'IE', mobileOnly: false }, // org: Eircom Limited
  { asn: 15502, operator: 'Vodafone Ireland', country: 'IE', mobileOnly: false, note: 'Mobile plus Vodafone home broadband (~15%).' }, // org: Vodafone Ireland Limited
  {
    asn: 13280,
    operator: 'Three Ireland',
    country: 'IE',
    mobileOnly: true,
    note: 'Includes the ex-O2 Ireland base; Three home broadband is 4G/5G fixed wireless.',
  }, // org: Three Ireland (Hutchison) limited

  // ── Portugal ──────────────────────────────────────────────────────────
  { asn: 3243, operator: 'MEO', country: 'PT', mobileOnly: false }, // org: MEO - SERVICOS DE COMUNICACOES E MULTIMEDIA S.A.
  { asn: 2860, operator: 'NOS', country: 'PT', mobileOnly: false }, // org: NOS COMUNICACOES, S.A.
  { asn: 12353, operator: 'Vodafone Portugal', country: 'PT', mobileOnly: false }, // org: Vodafone Portugal - Communicacoes Pessoais S.A.

  // ── Greece ────────────────────────────────────────────────────────────
  { asn: 6799, operator: 'Cosmote (OTE)', country: 'GR', mobileOnly: false, note: 'OTE fixed.' }, // org: Ote SA (Hellenic Telecommunications Organisation)
  { asn: 29247, operator: 'Cosmote (OTE)', country: 'GR', mobileOnly: true, note: 'Believed to be Cosmote mobile (data names it "Ote SA"); unverified.' }, // org: Ote SA (Hellenic Telecommunications Organisation)
  { asn: 3329, operator: 'Vodafone Greece', country: 'GR', mobileOnly: false }, // org: VODAFONE-PANAFON HELLENIC TELECOMMUNICATIONS COMPANY SA
  { asn: 25472, operator: 'Nova (ex-Wind Hellas)', country: 'GR', mobileOnly: false, note: 'Ex-Wind Hellas: mobile plus legacy fixed.' }, // org: Nova Telecommunications & Media Single Member S.A

  // ── Czechia ───────────────────────────────────────────────────────────
  { asn: 5610, operator: 'O2 Czech Republic', country: 'CZ', mobileOnly: false }, // org: O2 Czech Republic, a.s.
  { asn: 13036, operator: 'T-Mobile Czech Republic', country: 'CZ', mobileOnly: true, note: 'Small fixed base shares it; ex-GTS business network is AS5588.' }, // org: T-Mobile Czech Republic a.s.
  { asn: 16019, operator: 'Vodafone Czech Republic', country: 'CZ', mobileOnly: false, note: 'Mobile plus the ex-UPC cable network.' }, // org: Vodafone Czech Republic a.s.

  // ── Romania ───────────────────────────────────────────────────────────
  { asn: 8953, operator: 'Orange Romania', country: 'RO', mobileOnly: true, note: 'Orange mobile; Orange fixed (ex-Telekom Romania) is AS9050.' }, // org: Orange Romania S.A.
  { asn: 9050, operator: 'Orange Romania Communications', country: 'RO', mobileOnly: false }, // org: Orange Romania S.A.
  { asn: 12302, operator: 'Vodafone Romania', country: 'RO', mobileOnly: false, note: 'Mobile plus the ex-UPC cable network.' }, // org: Vodafone Romania S.A.
  { asn: 8708, operator: 'Digi Romania', country: 'RO', mobileOnly: false }, // org: DIGI ROMANIA S.A.
  { asn: 12632, operator: 'Digi Mobil', country: 'RO', mobileOnly: true }, // org: DigiNetMobil DIGI ROMANIA S.A.
  { asn: 35725, operator: 'Telekom Romania Mobile', country: 'RO', mobileOnly: true, note: 'Split between Digi and Vodafone in 2024-25.' }, // org: TELEKOM ROMANIA MOBILE COMMUNICATIONS S.A.

  // ── Hungary ───────────────────────────────────────────────────────────
  { asn: 5483, operator: 'Magyar Telekom', country: 'HU', mobileOnly: false }, // org: Magyar Telekom plc.
  { asn: 21334, operator: 'One Hungary (ex-Vodafone)', country: 'HU', mobileOnly: false, note: 'Mobile plus the ex-UPC cable network.' }, // org: One Hungary Ltd.
  { asn: 213155, operator: 'Yettel Hungary', country: 'HU', mobileOnly: true }, // org: Yettel Hungary Ltd.
  { asn: 20845, operator: 'Digi Hungary', country: 'HU', mobileOnly: false }, // org: DIGI Tavkozlesi es Szolgaltato Kft.

  // ── Ukraine ───────────────────────────────────────────────────────────
  { asn: 15895, operator: 'Kyivstar', country: 'UA', mobileOnly: true, note: 'Kyivstar home internet (~1M vs ~24M mobile) shares it.' }, // org: "Kyivstar" PJSC
  { asn: 21497, operator: 'Vodafone Ukraine', country: 'UA', mobileOnly: true }, // org: PrJSC "VF UKRAINE"
  { asn: 34058, operator: 'lifecell', country: 'UA', mobileOnly: true }, // org: Limited Liability Company "lifecell"

  // ── Israel ────────────────────────────────────────────────────────────
  { asn: 12400, operator: 'Partner', country: 'IL', mobileOnly: false }, // org: Partner Communications Ltd.
  { asn: 1680, operator: 'Cellcom Israel', country: 'IL', mobileOnly: false, note: 'Data names it "Cellcom Fixed Line Communication L.P"; mobile and fibre.' }, // org: Cellcom Fixed Line Communication L.P
  { asn: 16116, operator: 'Pelephone', country: 'IL', mobileOnly: true }, // org: Pelephone Communications Ltd.

  // ── Saudi Arabia ──────────────────────────────────────────────────────
  { asn: 39891, operator: 'stc', country: 'SA', mobileOnly: true, note: "stc's mobile (Al Jawal) AS." }, // org: Saudi Telecom Company JSC
  { asn: 25019, operator: 'stc', country: 'SA', mobileOnly: false }, // org: Saudi Telecom Company JSC
  { asn: 39386, operator: 'stc', country: 'SA', mobileOnly: false, note: 'Mostly IPv6 (2001:16a0::/32); fixed or mobile unverified.' }, // org: Saudi Telecom Company JSC
  { asn: 35819, operator: 'Mobily', country: 'SA', mobileOnly: true, note: 'Etihad Etisalat; Mobily fibre is small.' }, // org: Etihad Etisalat, a joint stock company
  { asn: 48237, operator: 'Mobily', country: 'SA', mobileOnly: true, note: 'IPv6-only in the data (2a02:ce0::/32).' }, // org: Etihad Etisalat, a joint stock company
  { asn: 43766, operator: 'Zain KSA', country: 'SA', mobileOnly: true }, // org: Mobile Telecommunication Company Saudi Arabia Joint-Stock company

  // ── United Arab Emirates ──────────────────────────────────────────────
  { asn: 5384, operator: 'e& (Etisalat UAE)', country: 'AE', mobileOnly: false }, // org: EMIRATES TELECOMMUNICATIONS GROUP COMPANY (ETISALAT GROUP) PJSC
  { asn: 15802, operator: 'du', country: 'AE', mobileOnly: false }, // org: Emirates Integrated Telecommunications Company PJSC

  // ── Egypt ─────────────────────────────────────────────────────────────
  { asn: 37069, operator: 'Orange Egypt', country: 'EG', mobileOnly: true, note: 'Ex-Mobinil.' }, // org: The Egyptian Company for Mobile Services (Mobinil)
  { asn: 24835, operator: 'Vodafone Egypt', country: 'EG', mobileOnly: false, note: 'Which of the two Vodafone Data ASes is mobile is unverified.' }, // org: Vodafone Data - Egypt
  { asn: 36935, operator: 'Vodafone Egypt', country: 'EG', mobileOnly: false, note: 'See AS24835.' }, // org: Vodafone Data
  { asn: 36992, operator: 'e& Egypt (Etisalat Misr)', country: 'EG', mobileOnly: false }, // org: ETISALAT MISR
  { asn: 8452, operator: 'WE (Telecom Egypt)', country: 'EG', mobileOnly: false }, // org: TE-AS

  // ── South Africa ──────────────────────────────────────────────────────
  { asn: 29975, operator: 'Vodacom', country: 'ZA', mobileOnly: true }, // org: Vodacom
  { asn: 36994, operator: 'Vodacom', country: 'ZA', mobileOnly: false, note: 'Vodacom business/fixed; role unverified.' }, // org: Vodacom
  { asn: 16637, operator: 'MTN South Africa', country: 'ZA', mobileOnly: true, note: 'MTN Business (enterprise) shares it.' }, // org: MTN SA
  { asn: 37168, operator: 'Cell C', country: 'ZA', mobileOnly: true }, // org: Cell C (Pty) Ltd
  {
    asn: 37457,
    operator: 'Telkom (Telkom Mobile)',
    country: 'ZA',
    mobileOnly: false,
    note: 'Telkom SA; whether this or AS5713 carries Telkom Mobile is unverified.',
  }, // org: Telkom SA Ltd.
  { asn: 37105, operator: 'rain', country: 'ZA', mobileOnly: true, note: 'Data-only 4G/5G operator.' }, // org: RAIN GROUP HOLDINGS (PTY) LTD

  // ── Nigeria ───────────────────────────────────────────────────────────
  { asn: 29465, operator: 'MTN Nigeria', country: 'NG', mobileOnly: true }, // org: MTN NIGERIA Communication limited
  { asn: 36873, operator: 'Airtel Nigeria', country: 'NG', mobileOnly: true }, // org: Airtel Networks Limited
  { asn: 37148, operator: 'Glo (Globacom)', country: 'NG', mobileOnly: true }, // org: Globacom Limited
  { asn: 37076, operator: '9mobile (EMTS)', country: 'NG', mobileOnly: true }, // org: Emerging Markets Telecommunication Services (EMTS) Limited

  // ── Kenya ─────────────────────────────────────────────────────────────
  { asn: 33771, operator: 'Safaricom', country: 'KE', mobileOnly: true, note: 'Safaricom Home fibre (small) shares it.' }, // org: Safaricom Limited
  { asn: 36926, operator: 'Airtel Kenya', country: 'KE', mobileOnly: true }, // org: Airtel Networks Kenya Limited
  { asn: 12455, operator: 'Telkom Kenya', country: 'KE', mobileOnly: false, note: "Jambonet is Telkom Kenya's IP network; mobile egress here unverified." }, // org: Jambonet Autonomous System

  // ── New Zealand ───────────────────────────────────────────────────────
  { asn: 9500, operator: 'One NZ', country: 'NZ', mobileOnly: false }, // org: One New Zealand Group Limited
  { asn: 4771, operator: 'Spark', country: 'NZ', mobileOnly: false }, // org: Spark New Zealand Trading Limited
  {
    asn: 9790,
    operator: '2degrees',
    country: 'NZ',
    mobileOnly: false,
    note: 'Ex-CallPlus/Orcon fixed, now 2degrees; which of its ASes carries mobile is unverified.',
  }, // org: Two Degrees Mobile Limited
  { asn: 23655, operator: '2degrees', country: 'NZ', mobileOnly: false, note: 'See AS9790.' }, // org: Two Degrees Mobile Limited
  { asn: 38793, operator: '2degrees', country: 'NZ', mobileOnly: false, note: 'IPv6-only in the data (2405:a400::/32).' }, // org: Two Degrees Mobile Limited

  // ── Singapore ─────────────────────────────────────────────────────────
  { asn: 45143, operator: 'Singtel Mobile', country: 'SG', mobileOnly: true }, // org: Singapore Telecom Mobile Pte Ltd
  { asn: 4773, operator: 'M1', country: 'SG', mobileOnly: true, note: 'M1 fibre is AS17547.' }, // org: M1 LIMITED
  { asn: 4657, operator: 'StarHub', country: 'SG', mobileOnly: false, note: 'StarHub mobile and cable; fibre broadband is AS55430.' }, // org: Starhub Ltd.

  // ── Malaysia ──────────────────────────────────────────────────────────
  { asn: 9534, operator: 'Maxis', country: 'MY', mobileOnly: false }, // org: Maxis Broadband Sdn Bhd
  { asn: 10030, operator: 'CelcomDigi (Celcom)', country: 'MY', mobileOnly: true }, // org: Celcom Axiata Berhad
  { asn: 4818, operator: 'CelcomDigi (Digi)', country: 'MY', mobileOnly: true }, // org: DiGi Telecommunications Sdn Bhd., Digi Internet Exchange
  { asn: 10081, operator: 'CelcomDigi (Digi)', country: 'MY', mobileOnly: true }, // org: DiGi Telecommunications Sdn Bhd
  { asn: 38466, operator: 'U Mobile', country: 'MY', mobileOnly: true }, // org: U Mobile Sdn Bhd
  { asn: 45960, operator: 'Yes (YTL)', country: 'MY', mobileOnly: true }, // org: YTL Communications Sdn Bhd
  { asn: 4788, operator: 'unifi mobile (TM)', country: 'MY', mobileOnly: false, note: 'TM unifi fixed broadband dominates this AS.' }, // org: TM TECHNOLOGY SERVICES SDN BHD

  // ── Thailand ──────────────────────────────────────────────────────────
  { asn: 133481, operator: 'AIS', country: 'TH', mobileOnly: true, note: "Advanced Wireless Network, AIS's mobile licensee. AIS Fibre/3BB is AS45758." }, // org: ADVANCED WIRELESS NETWORK COMPANY LIMITED
  { asn: 45458, operator: 'AIS', country: 'TH', mobileOnly: true }, // org: ADVANCED WIRELESS NETWORK COMPANY LIMITED
  { asn: 131445, operator: 'AIS', country: 'TH', mobileOnly: true }, // org: ADVANCED WIRELESS NETWORK COMPANY LIMITED
  { asn: 45430, operator: 'AIS', country: 'TH', mobileOnly: true }, // org: ADVANCED WIRELESS NETWORK COMPANY LIMITED
  { asn: 132618, operator: 'True Move H', country: 'TH', mobileOnly: true }, // org: True Move Company Limited
  { asn: 24378, operator: 'dtac (True)', country: 'TH', mobileOnly: true }, // org: Total Access Communication PLC.
  { asn: 9587, operator: 'dtac (True)', country: 'TH', mobileOnly: true }, // org: DTAC TriNet Co.,Ltd.
  { asn: 10089, operator: 'dtac (True)', country: 'TH', mobileOnly: true, note: 'Mostly IPv6 (2404:8d00::/30).' }, // org: Total Access Communication PLC.
  { asn: 9931, operator: 'NT (National Telecom)', country: 'TH', mobileOnly: false }, // org: National Telecom Public Company Limited

  // ── Hong Kong ─────────────────────────────────────────────────────────
  { asn: 38819, operator: 'csl (HKT)', country: 'HK', mobileOnly: true }, // org: CSL Limited
  { asn: 4760, operator: 'HKT / PCCW', country: 'HK', mobileOnly: false, note: 'Netvigator fixed; some csl/1O1O traffic may egress here.' }, // org: PCCW IMS Limited
  { asn: 17924, operator: 'SmarTone', country: 'HK', mobileOnly: true }, // org: Smartone Mobile communications Limited
  { asn: 9474, operator: 'SmarTone', country: 'HK', mobileOnly: true }, // org: Smartone Mobile Comm. Limited
  { asn: 137872, operator: 'China Mobile Hong Kong', country: 'HK', mobileOnly: true, note: 'Small home broadband base shares it.' }, // org: China Mobile Hong Kong Company Limited
  { asn: 17794, operator: '3 Hong Kong', country: 'HK', mobileOnly: true }, // org: Hutchison Telecommunications (Hong Kong) Ltd

  // ── Pakistan ──────────────────────────────────────────────────────────
  { asn: 45669, operator: 'Jazz (Mobilink)', country: 'PK', mobileOnly: true }, // org: Mobilink GSM, Pakistan Mobile Communication Ltd.
  { asn: 58470, operator: 'Jazz (Mobilink)', country: 'PK', mobileOnly: true }, // org: Mobilink GSM, Pakistan Mobile Communication Ltd.
  { asn: 59257, operator: 'Zong (CMPak)', country: 'PK', mobileOnly: true }, // org: CMPak Limited
  { asn: 138423, operator: 'Zong (CMPak)', country: 'PK', mobileOnly: true }, // org: CMPak Limited
  { asn: 56167, operator: 'Ufone (PTML)', country: 'PK', mobileOnly: true }, // org: PTML
  { asn: 24499, operator: 'Telenor Pakistan', country: 'PK', mobileOnly: true, note: 'Being merged into PTML (Ufone).' }, // org: Telenor Pakistan (Pvt) Ltd

  // ── Bangladesh ────────────────────────────────────────────────────────
  { asn: 24389, operator: 'Grameenphone', country: 'BD', mobileOnly: true }, // org: grameenphone limited
  { asn: 24432, operator: 'Robi', country: 'BD', mobileOnly: true, note: 'Data names it "Axiata (Bangladesh) Limited".' }, // org: Axiata (Bangladesh) Limited
  { asn: 45245, operator: 'Banglalink', country: 'BD', mobileOnly: true }, // org: Banglalink Digital Communications Ltd
  { asn: 45925, operator: 'Teletalk', country: 'BD', mobileOnly: true }, // org: Teletalk Bangladesh Ltd.
];
